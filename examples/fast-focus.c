/* The six primitives of the boat hull paper's fast-focus application (examples/fast-focus.yaml),
 * written as a person would in C for a 1024x1024 camera image.  `perfcast classify` derives the
 * species written above each loop; examples/fast-focus-from-c.yaml predicts the application from
 * this file alone:
 *     perfcast classify examples/fast-focus.c --predict -d gtx470
 *     perfcast app examples/fast-focus-from-c.yaml -d gtx470 -d gts250 */
#define H 1024
#define W 1024
#define BINS 256

void histogram(const unsigned char image[H][W], int hist[BINS])
{
    /* expect: 1024x1024|element -> 256|shared ; f = 1 */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            hist[image[y][x]]++;
}

float maximum(const float *values)
{
    float best = 0.0f;
    /* expect: 262144|element -> 1|shared ; f = 1 */
    for (long i = 0; i < 262144; i++)
        if (values[i] > best)
            best = values[i];
    return best;
}

void threshold(const float *restrict in, float *restrict out, float level)
{
    /* expect: 1024x1024|element -> 1024x1024|element ; f = 1 */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            out[y * W + x] = in[y * W + x] > level ? 1.0f : 0.0f;
}

void erode(const float *restrict in, float *restrict out)
{
    /* expect: 1024x1024|neighb(7x7) -> 1024x1024|element ; f = 1 */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float low = 1.0f;
            for (int dy = -3; dy <= 3; dy++)
                for (int dx = -3; dx <= 3; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy >= 0 && yy < H && xx >= 0 && xx < W)
                        low = fminf(low, in[yy * W + xx]);
                }
            out[y * W + x] = low;
        }
}

void x_projection(const float in[H][W], float sums[H])
{
    /* expect: 1024x1024|tile(1x1024) -> 1024|element ; f = 1 */
    for (int y = 0; y < H; y++) {
        float sum = 0.0f;
        for (int x = 0; x < W; x++)
            sum += in[y][x];
        sums[y] = sum;
    }
}

void y_projection(const float in[H][W], float sums[W])
{
    /* expect: 1024x1024|tile(1024x1) -> 1024|element ; f = 1 */
    for (int x = 0; x < W; x++) {
        float sum = 0.0f;
        for (int y = 0; y < H; y++)
            sum += in[y][x];
        sums[x] = sum;
    }
}
