/* Effective core clock under load: a chain of dependent one-cycle integer adds on every core.
 * Each add waits for the previous one, so a core retires exactly one per clock; eight per loop
 * iteration hide the loop's own instructions, which run beside the chain.
 * The adds take a register, not an immediate: Intel cores since Golden Cove fold chains of
 * add-immediate in the renamer and retire several a clock (a 3.8 GHz Xeon then reads 20 GHz). */
#include <omp.h>

#if defined(__x86_64__)
#define ADD1(x) __asm__ volatile("add %1, %0" : "+r"(x) : "r"(one))
#elif defined(__aarch64__)
#define ADD1(x) __asm__ volatile("add %0, %0, %1" : "+r"(x) : "r"(one))
#else
#error "clock probe: only x86-64 and AArch64"
#endif

/* Runs `iterations` x 8 dependent adds on each of `threads` threads; returns the slowest thread's seconds. */
double add_chain(long iterations, int threads)
{
    double slowest = 0.0;
#pragma omp parallel num_threads(threads) reduction(max : slowest)
    {
        static volatile long unit = 1;
        long x = 0, one = unit; /* read at run time: the compiler cannot turn it back into an immediate */
        double start = omp_get_wtime();
        for (long i = 0; i < iterations; i++) {
            ADD1(x); ADD1(x); ADD1(x); ADD1(x); ADD1(x); ADD1(x); ADD1(x); ADD1(x);
        }
        double elapsed = omp_get_wtime() - start;
        if (x != 8 * iterations) elapsed = -1.0; /* never: keeps x alive */
        slowest = elapsed;
    }
    return slowest;
}
