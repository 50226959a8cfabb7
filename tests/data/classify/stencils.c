/* Stencils and convolutions. */
#define H 1024
#define W 2048
#define D 128

/* The interior is written: (H-2)x(W-2) work units, each reading its 3x3 neighbourhood of the HxW input. */
/* expect: HxW|neighb(3x3) -> 1022x2046|element ; f = 5/9 */
void jacobi5(const float in[H][W], float out[H][W])
{
    for (int y = 1; y < H - 1; y++)
        for (int x = 1; x < W - 1; x++)
            out[y][x] = 0.2f * (in[y][x] + in[y - 1][x] + in[y + 1][x] + in[y][x - 1] + in[y][x + 1]);
}

/* expect: DxDxD|neighb(3x3x3) -> 126x126x126|element ; f = 8/27 */
void stencil7(const double *in, double *out)
{
    for (int z = 1; z < D - 1; z++)
        for (int y = 1; y < D - 1; y++)
            for (int x = 1; x < D - 1; x++) {
                long c = ((long)z * D + y) * D + x;
                out[c] = 0.5 * in[c] + 0.1 * (in[c - 1] + in[c + 1] + in[c - D] + in[c + D] + in[c - D * D] + in[c + D * D]);
            }
}

/* expect: W|neighb(5) -> 2044|element ; f = 9/5 */
void smooth5(const float *in, float *out)
{
    for (int i = 2; i < W - 2; i++)
        out[i] = 0.1f * in[i - 2] + 0.2f * in[i - 1] + 0.4f * in[i] + 0.2f * in[i + 1] + 0.1f * in[i + 2];
}

/* expect: HxW|neighb(3x3) ^ 3x3|full -> 1022x2046|element ; f = 2 */
void convolve3x3(const float *image, const float kernel[3][3], float *out)
{
    for (int y = 1; y < H - 1; y++)
        for (int x = 1; x < W - 1; x++) {
            float acc = 0.0f;
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++)
                    acc += kernel[ky][kx] * image[(y + ky - 1) * W + (x + kx - 1)];
            out[y * W + x] = acc;
        }
}

/* expect: HxW|neighb(3x3) -> HxW|element ; f = 10/9 */
void box_blur_clamped(const float *in, float *out)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float sum = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    if (y + dy >= 0 && y + dy < H && x + dx >= 0 && x + dx < W)
                        sum += in[(y + dy) * W + x + dx];
            out[y * W + x] = sum * (1.0f / 9.0f);
        }
}

/* expect: HxW|neighb(3x1) -> 1022x2048|element ; f = 2/3 */
void vertical_diff(const float in[H][W], float out[H][W])
{
    for (int y = 1; y < H - 1; y++)
        for (int x = 0; x < W; x++)
            out[y][x] = 0.5f * (in[y + 1][x] - in[y - 1][x]);
}

/* expect: unclassified (the checkerboard start 1 + (y & 1) is not affine) */
void red_black_sweep(float u[H][W], const float f[H][W])
{
    for (int y = 1; y < H - 1; y++)
        for (int x = 1 + (y & 1); x < W - 1; x += 2)
            u[y][x] = 0.25f * (u[y - 1][x] + u[y + 1][x] + u[y][x - 1] + u[y][x + 1] - f[y][x]);
}
