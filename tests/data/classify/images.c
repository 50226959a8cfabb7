/* Image resampling and block transforms. */
#define H 1024
#define W 1024

/* expect: HxW|tile(2x2) -> 512x512|element ; f = 5/4 */
void downscale2(const float *in, float *out)
{
    for (int y = 0; y < H / 2; y++)
        for (int x = 0; x < W / 2; x++) {
            float sum = 0.0f;
            for (int u = 0; u < 2; u++)
                for (int v = 0; v < 2; v++)
                    sum += in[(2 * y + u) * W + 2 * x + v];
            out[y * (W / 2) + x] = 0.25f * sum;
        }
}

/* expect: HxW|element ^ HxW|element -> HxW|element ; f = 2 */
void difference_abs(const float a[H][W], const float b[H][W], float d[H][W])
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            d[y][x] = fabsf(a[y][x] - b[y][x]);
}

/* expect: HxW|element -> HxW|element ; f = 5 */
void gamma_lut_free(const unsigned char *in, float *out)
{
    for (long i = 0; i < (long)H * W; i++) {
        float v = in[i] * (1.0f / 255.0f);
        out[i] = v * v * (3.0f - 2.0f * v);
    }
}

/* expect: HxW|element -> HxW|element ; f = 3 */
void rgb_weights(const float r[H][W], float out[H][W])
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float value = r[y][x];
            if (value < 0.5f)
                out[y][x] = 2.0f * value;
            else
                out[y][x] = 1.0f - (value - 0.5f);
        }
}
