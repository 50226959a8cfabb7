/* Atomic increments into 256 bins: each thread's own bins against one set all threads share. Why the suite's
 * histogram on PoCL barely sped up from one core to two on the Xeon VM (docs/validation/projection.md): its
 * work-groups merge into one global histogram. OpenMP, no perfcast.
 *
 *   gcc -O2 -fopenmp scripts/shared_atomics.c -o /tmp/shared_atomics && /tmp/shared_atomics [MILLIONS]
 *
 * Prints, for 1 thread and for every thread OpenMP gives (OMP_NUM_THREADS), M atomics/s into private and into
 * shared bins. Each thread draws bins from its own linear congruential sequence (no memory traffic besides). */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BINS 256

static uint32_t shared_bins[BINS] __attribute__((aligned(64)));

static double run(int threads, int shared, long total)
{
    double start = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
        /* A thread's own bins sit on lines no other thread writes. */
        uint32_t *own = aligned_alloc(64, BINS * sizeof(uint32_t));
        uint32_t *bins = shared ? shared_bins : own;
        uint32_t x = 12345u + (uint32_t)omp_get_thread_num();
        for (long i = 0; i < total / threads; i++) {
            x = x * 1664525u + 1013904223u;
            __atomic_fetch_add(&bins[x >> 24], 1u, __ATOMIC_RELAXED);
        }
        free(own);
    }
    return total / (omp_get_wtime() - start) / 1e6;
}

int main(int argc, char **argv)
{
    long total = (long)((argc > 1 ? atof(argv[1]) : 50.0) * 1e6);
    int most = omp_get_max_threads();
    for (int threads = 1; threads <= most; threads = threads == most ? most + 1 : most)
        printf("%d thread(s): private bins %.1f M atomics/s, shared bins %.1f M atomics/s\n", threads,
               run(threads, 0, total), run(threads, 1, total));
    return 0;
}
