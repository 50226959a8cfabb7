/* Reference STREAM triad (after McCalpin's STREAM), the yardstick perfcast's DRAM figure is held to.
 * Build: gcc -O3 -march=native -fopenmp stream.c -o stream
 * Usage: stream N NTIMES   (N doubles per array; the first of NTIMES runs is discarded)
 * Prints one line per kernel: name, median and best rate in B/s (bytes counted as STREAM does). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, double *times, int ntimes, double bytes)
{
    qsort(times + 1, ntimes - 1, sizeof(double), cmp); /* times[0] is the warm-up */
    int m = ntimes - 1;
    double median = m % 2 ? times[1 + m / 2] : 0.5 * (times[m / 2] + times[1 + m / 2]);
    printf("%s %.6e %.6e\n", name, bytes / median, bytes / times[1]);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20000000;
    int ntimes = argc > 2 ? atoi(argv[2]) : 11;
    if (n < 1000 || ntimes < 2) return 2;
    double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double)), *c = malloc(n * sizeof(double));
    double *copy = malloc(ntimes * sizeof(double)), *triad = malloc(ntimes * sizeof(double));
    if (!a || !b || !c || !copy || !triad) return 3;
    double scalar = 3.0;
#pragma omp parallel for
    for (long j = 0; j < n; j++) { a[j] = 1.0; b[j] = 2.0; c[j] = 0.0; }
    for (int k = 0; k < ntimes; k++) {
        double t = omp_get_wtime();
#pragma omp parallel for
        for (long j = 0; j < n; j++) c[j] = a[j];
        copy[k] = omp_get_wtime() - t;
        t = omp_get_wtime();
#pragma omp parallel for
        for (long j = 0; j < n; j++) a[j] = b[j] + scalar * c[j];
        triad[k] = omp_get_wtime() - t;
    }
    report("copy", copy, ntimes, 2.0 * sizeof(double) * n);
    report("triad", triad, ntimes, 3.0 * sizeof(double) * n);
    printf("check %g\n", a[n / 2]); /* keeps the results alive */
    return 0;
}
