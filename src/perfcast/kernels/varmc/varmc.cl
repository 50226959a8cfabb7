/* Monte Carlo Value-at-Risk ("simplevarmc", spec §5.1) with its four tuning parameters as
 * build-time macros:
 *   POSBS   positions staged into local memory per block (async_work_group_copy, single buffer)
 *   SIMBS   simulation vectors per work-item
 *   VWIDTH  simulations per vector (1, 2, 4, 8, 16: OpenCL vector types)
 *   WGSIZE  work-items per work-group
 * A work-item computes SIMBS * VWIDTH simulations.  The random numbers of simulation s come from a
 * counter-based generator (splitmix64 of (seed, s, counter)), so every simulation, and hence every
 * work-item, has its own independent stream, and the results do not depend on the tuning parameters.
 */

#if VWIDTH == 1
typedef float realv;
#else
#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)
typedef XCAT(float, VWIDTH) realv;
#endif

#define STOCK 0
#define FBOND 1

inline ulong splitmix64(ulong x)
{
    x += 0x9E3779B97F4A7C15UL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;
    return x ^ (x >> 31);
}

/* Uniform in (0, 1] from the top 24 bits. */
inline float uniform(uint bits) { return ((float)(bits >> 8) + 1.0f) * (1.0f / 16777216.0f); }

/* Three standard normals of simulation `sim` (Box-Muller on four uniforms). */
inline void normals(ulong seed, ulong sim, float *z0, float *z1, float *z2)
{
    ulong r0 = splitmix64(seed ^ (sim * 2UL));
    ulong r1 = splitmix64(seed ^ (sim * 2UL + 1UL));
    float u0 = uniform((uint)r0), u1 = uniform((uint)(r0 >> 32));
    float u2 = uniform((uint)r1), u3 = uniform((uint)(r1 >> 32));
    float m0 = sqrt(-2.0f * log(u0)), m1 = sqrt(-2.0f * log(u2));
    *z0 = m0 * cos(6.28318530718f * u1);
    *z1 = m0 * sin(6.28318530718f * u1);
    *z2 = m1 * cos(6.28318530718f * u3);
}

__kernel __attribute__((reqd_work_group_size(WGSIZE, 1, 1)))
void varmc(__global const int *types, __global const float *amounts, __global const float *maturities,
           int npos, __constant float *market, ulong seed, __global float *values)
{
    /* market: mean[3] (stock index, foreign rate, exchange rate), then the 3x3 lower Cholesky factor
     * row by row, then today (day number). */
    __local int ltype[POSBS];
    __local float lamount[POSBS];
    __local float lmaturity[POSBS];

    realv stock[SIMBS], rate[SIMBS], fx[SIMBS], value[SIMBS];
    ulong first = (ulong)get_global_id(0) * (SIMBS * VWIDTH);
    for (int j = 0; j < SIMBS; j++) {
        float s[VWIDTH], r[VWIDTH], x[VWIDTH];
        for (int lane = 0; lane < VWIDTH; lane++) {
            float z0, z1, z2;
            normals(seed, first + j * VWIDTH + lane, &z0, &z1, &z2);
            s[lane] = market[0] + market[3] * z0;
            r[lane] = market[1] + market[6] * z0 + market[7] * z1;
            x[lane] = market[2] + market[9] * z0 + market[10] * z1 + market[11] * z2;
        }
#if VWIDTH == 1
        stock[j] = s[0]; rate[j] = r[0]; fx[j] = x[0];
#else
        stock[j] = XCAT(vload, VWIDTH)(0, s);
        rate[j] = XCAT(vload, VWIDTH)(0, r);
        fx[j] = XCAT(vload, VWIDTH)(0, x);
#endif
        value[j] = (realv)0.0f;
    }
    const float today = market[12];
    for (int base = 0; base < npos; base += POSBS) {
        int count = min(POSBS, npos - base);
        event_t copies[3];
        copies[0] = async_work_group_copy(ltype, types + base, count, 0);
        copies[1] = async_work_group_copy(lamount, amounts + base, count, 0);
        copies[2] = async_work_group_copy(lmaturity, maturities + base, count, 0);
        wait_group_events(3, copies);
        for (int p = 0; p < count; p++) {
            float amount = lamount[p];
            if (ltype[p] == STOCK) {
                for (int j = 0; j < SIMBS; j++) value[j] += amount * stock[j];
            } else {
                float years = (lmaturity[p] - today) / 365.25f;
                for (int j = 0; j < SIMBS; j++) value[j] += amount * fx[j] * exp(-rate[j] * years);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the block is read by every work-item before the next copy */
    }
    for (int j = 0; j < SIMBS; j++) {
#if VWIDTH == 1
        values[first + j] = value[j];
#else
        XCAT(vstore, VWIDTH)(value[j], 0, values + first + j * VWIDTH);
#endif
    }
}
