/* Linear algebra loop nests, written plainly, with the species a person assigns to each. */
#define N 512
#define M 256
#define P 128

/* expect: N|element ^ N|element -> N|element ; f = 2 */
void axpy(float a, const float x[N], float y[N], float z[N])
{
    for (int i = 0; i < N; i++)
        z[i] = a * x[i] + y[i];
}

/* expect: N|element ^ N|element -> 1|shared ; f = 2 */
float dot(const float x[N], const float y[N])
{
    float sum = 0.0f;
    for (int i = 0; i < N; i++)
        sum += x[i] * y[i];
    return sum;
}

/* expect: NxM|tile(1xM) ^ M|full -> N|element ; f = 2 */
void matvec(const float A[N][M], const float x[M], float y[N])
{
    for (int i = 0; i < N; i++) {
        float acc = 0.0f;
        for (int j = 0; j < M; j++)
            acc += A[i][j] * x[j];
        y[i] = acc;
    }
}

/* expect: NxP|tile(1xP) ^ PxM|tile(Px1) -> NxM|element ; f = 2 */
void matmul(const float A[N][P], const float B[P][M], float C[N][M])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            float acc = 0.0f;
            for (int k = 0; k < P; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = acc;
        }
}

/* expect: NxP|tile(1xP) ^ PxM|tile(Px1) -> NxM|element ; f = 2 */
void matmul_flat(const double *A, const double *B, double *C)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            double acc = 0.0;
            for (int k = 0; k < P; k++)
                acc += A[i * P + k] * B[k * M + j];
            C[i * M + j] = acc;
        }
}

/* expect: N|element ^ M|element -> NxM|element ; f = 1 */
void outer_product(const float x[N], const float y[M], float A[N][M])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A[i][j] = x[i] * y[j];
}

/* expect: NxM|tile(Nx1) ^ N|full -> M|element ; f = 2 */
void matvec_transposed(const float A[N][M], const float x[N], float y[M])
{
    for (int j = 0; j < M; j++) {
        float acc = 0.0f;
        for (int i = 0; i < N; i++)
            acc += A[i][j] * x[i];
        y[j] = acc;
    }
}

/* expect: NxM|element ^ NxM|element -> NxM|element ; f = 1 */
void matrix_add(const float A[N][M], const float B[N][M], float C[N][M])
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            C[i][j] = A[i][j] + B[i][j];
}

/* expect: N|element -> N|element ; f = 1 */
void scale_in_place(float x[N], float a)
{
    for (int i = 0; i < N; i++)
        x[i] *= a;
}

/* Triangular: loop i launches the inner nest for i = 1..N-1 (i = 0 runs nothing), i elements each: 256 on average. */
/* expect: 1x256|element ^ 256|element -> 1|shared ; f = 2 */
void forward_substitution(const float L[N][N], float x[N], const float b[N])
{
    for (int i = 0; i < N; i++) {
        float s = b[i];
        for (int j = 0; j < i; j++)
            s -= L[i][j] * x[j];
        x[i] = s / L[i][i];
    }
}
