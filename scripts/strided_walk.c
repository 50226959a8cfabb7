/* Strided walks against random gathers, on 4 KiB and 2 MiB pages: why SHOC reduction's grid-stride loop runs
 * faster than the latency floor prices it (docs/validation/programs/README.md). One core, scalar, no perfcast.
 *
 *   gcc -O2 -fno-tree-vectorize scripts/strided_walk.c -o /tmp/strided_walk
 *   /tmp/strided_walk walk STRIDE_FLOATS HUGE [DEPTH]   work-items in order, each summing x[i + k*STRIDE],
 *                                                       k < DEPTH (64)
 *   /tmp/strided_walk gather MIB HUGE              independent loads to random lines of MIB MiB (as the bench's)
 *   /tmp/strided_walk setgather STRIDE_B LINES     the same loads to random ones of LINES lines STRIDE_B bytes
 *                                                  apart (as the bench's set_walk_loads; 4 KiB pages)
 *
 * HUGE 1 asks for transparent huge pages (madvise; the line "AnonHugePages" says what the kernel gave). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static float *pages(size_t bytes, int huge)
{
    size_t alloc = (bytes + (2u << 20)) & ~((size_t)(2u << 20) - 1);
    float *x = mmap(NULL, alloc, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (x == MAP_FAILED) { perror("mmap"); exit(1); }
    madvise(x, alloc, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    for (size_t i = 0; i < bytes / sizeof(float); i++) x[i] = 1.0f;
    return x;
}

static void huge_pages(void)
{
    char line[256];
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "AnonHugePages", 13)) printf("  %s", line);
    if (f) fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s walk STRIDE_FLOATS HUGE [DEPTH] | gather MIB HUGE | setgather STRIDE_B LINES\n",
                argv[0]);
        return 2;
    }
    int huge = atoi(argv[3]);
    double best = 1e9, loads;
    volatile float sink;
    if (!strcmp(argv[1], "setgather")) {
        size_t stride = (size_t)atol(argv[2]), lines = (size_t)atol(argv[3]), count = 1 << 24;
        char *x = (char *)pages(stride * lines + 64, 0);
        unsigned *index = malloc(count * sizeof *index), s = 12345;
        for (size_t i = 0; i < count; i++) {
            s = s * 1664525u + 1013904223u;
            index[i] = (unsigned)((((unsigned long long)s * lines) >> 32) * stride);
        }
        loads = (double)count;
        for (int r = 0; r < 5; r++) {
            double t0 = now();
            float a = 0, b = 0, c = 0, d = 0;
            for (size_t i = 0; i < count; i += 4) {
                a += *(float *)(x + index[i]); b += *(float *)(x + index[i + 1]);
                c += *(float *)(x + index[i + 2]); d += *(float *)(x + index[i + 3]);
            }
            double t = now() - t0;
            sink = a + b + c + d;
            if (t < best) best = t;
        }
        printf("setgather: %zu lines %zu B apart (%.3g MiB): %.3g G loads/s\n", lines, stride,
               stride * lines / 1048576.0, loads / best / 1e9);
        (void)sink;
        return 0;
    }
    if (!strcmp(argv[1], "walk")) {
        long stride = atol(argv[2]), depth = argc == 5 ? atol(argv[4]) : 64;  /* stride x depth floats, each once */
        float *x = pages((size_t)stride * depth * sizeof(float), huge);
        loads = (double)stride * depth;
        for (int r = 0; r < 5; r++) {
            double t0 = now();
            float total = 0;
            for (long i = 0; i < stride; i++) {
                float s = 0;
                for (long k = 0; k < depth; k++) s += x[i + k * stride];
                total += s;
            }
            double t = now() - t0;
            sink = total;
            if (t < best) best = t;
        }
        printf("walk: stride %ld floats (%.6g KiB), depth %ld, %s pages: %.3g G loads/s\n", stride,
               stride * 4 / 1024.0, depth, huge ? "huge" : "4 KiB", loads / best / 1e9);
    } else {
        size_t n = ((size_t)atol(argv[2]) << 20) / sizeof(float), count = 1 << 24;
        float *x = pages(n * sizeof(float), huge);
        unsigned *index = malloc(count * sizeof *index), s = 12345;
        for (size_t i = 0; i < count; i++) {
            s = s * 1664525u + 1013904223u;
            index[i] = (unsigned)(((unsigned long long)s * n) >> 32);
        }
        loads = (double)count;
        for (int r = 0; r < 5; r++) {
            double t0 = now();
            float a = 0, b = 0, c = 0, d = 0;
            for (size_t i = 0; i < count; i += 4) {
                a += x[index[i]]; b += x[index[i + 1]]; c += x[index[i + 2]]; d += x[index[i + 3]];
            }
            double t = now() - t0;
            sink = a + b + c + d;
            if (t < best) best = t;
        }
        printf("gather: %s MiB, %s pages: %.3g G loads/s\n", argv[2], huge ? "huge" : "4 KiB", loads / best / 1e9);
    }
    (void)sink;
    huge_pages();
    return 0;
}
