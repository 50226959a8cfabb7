/* The cost of touching memory a program allocated and never wrote: why kernels that write a fresh buffer once
 * (Rodinia kmeans's `kmeans_swap`, SHOC stencil2d's `CopyRect`) take longer than any model of their loads and
 * stores says (docs/validation/programs/README.md). One core, no perfcast, 4 KiB pages (no huge pages asked).
 *
 *   gcc -O2 scripts/first_touch.c -o /tmp/first_touch
 *   /tmp/first_touch MIB [RUNS]     a fresh anonymous mapping of MIB MiB written one store a line, then again
 *
 * The first pass takes each page's fault (the kernel zeroes and maps it; under a hypervisor, a nested fault too);
 * the second finds the pages mapped. Each run maps afresh. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double write_lines(volatile float *a, size_t bytes, float value)
{
    double start = now();
    for (size_t i = 0; i < bytes / sizeof(float); i += 64 / sizeof(float))
        a[i] = value;
    return now() - start;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s MIB [RUNS]\n", argv[0]);
        return 2;
    }
    size_t bytes = (size_t)(atof(argv[1]) * 1048576.0);
    int runs = argc > 2 ? atoi(argv[2]) : 5;
    double pages = bytes / 4096.0;
    for (int run = 0; run < runs; run++) {
        float *a = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a == MAP_FAILED) {
            perror("mmap");
            return 1;
        }
        double first = write_lines(a, bytes, 1.0f), again = write_lines(a, bytes, 2.0f);
        printf("%.1f MiB: first touch %.2f ms (%.2f us a page), pages mapped %.2f ms\n", bytes / 1048576.0,
               first * 1e3, first * 1e6 / pages, again * 1e3);
        munmap(a, bytes);
    }
    return 0;
}
