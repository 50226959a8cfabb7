/* Reference peak fp32 FMA loop: the yardstick perfcast's compute peak is held to.
 * Build: gcc -O3 -march=native -fopenmp peakflops.c -o peakflops
 * Usage: peakflops ITERATIONS NTIMES
 * CHAINS independent accumulators of the widest vector the compiler targets (GCC vector
 * extensions), so the FMA pipes never wait on a result and nothing spills.  Prints median and best op/s. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__AVX512F__)
#define VBYTES 64
#elif defined(__AVX__)
#define VBYTES 32
#else
#define VBYTES 16
#endif
typedef float vec __attribute__((vector_size(VBYTES)));
#define WIDTH (VBYTES / 4)
#ifndef CHAINS /* independent accumulators: three quarters of the vector registers (perfcast passes -DCHAINS) */
#define CHAINS 12
#endif

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 100000000;
    int ntimes = argc > 2 ? atoi(argv[2]) : 11;
    if (iterations < 1 || ntimes < 2) return 2;
    double *times = malloc(ntimes * sizeof(double));
    float sink = 0;
    int threads = 1;
    for (int k = 0; k < ntimes; k++) {
        double t = omp_get_wtime();
#pragma omp parallel reduction(+ : sink)
        {
#pragma omp single
            threads = omp_get_num_threads();
            vec acc[CHAINS];
            vec a, b;
            for (int i = 0; i < WIDTH; i++) { a[i] = 0.999f; b[i] = 0.001f; }
            for (int c = 0; c < CHAINS; c++)
                for (int i = 0; i < WIDTH; i++) acc[c][i] = (float)(c + i + omp_get_thread_num());
            for (long it = 0; it < iterations; it++)
#pragma GCC unroll 64 /* gcc peels at most 16 iterations by itself: 24 chains (AVX-512) stayed in memory */
                for (int c = 0; c < CHAINS; c++) acc[c] = acc[c] * a + b;
            for (int c = 0; c < CHAINS; c++)
                for (int i = 0; i < WIDTH; i++) sink += acc[c][i];
        }
        times[k] = omp_get_wtime() - t;
    }
    qsort(times + 1, ntimes - 1, sizeof(double), cmp);
    int m = ntimes - 1;
    double median = m % 2 ? times[1 + m / 2] : 0.5 * (times[m / 2] + times[1 + m / 2]);
    double ops = 2.0 * WIDTH * CHAINS * (double)iterations * threads;
    printf("fma %.6e %.6e\n", ops / median, ops / times[1]);
    printf("threads %d width %d sink %g\n", threads, WIDTH, sink);
    return 0;
}
