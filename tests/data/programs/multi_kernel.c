/* A small multi-kernel OpenCL program for the launch-log tests: it does what real programs do to an interposer.
 *
 *   multi_kernel N REPS [THREADS] [fork]
 *
 * Three programs built separately; kernels launched on three queues: a plain 1.x queue whose events the program
 * releases at once, an out-of-order profiling queue (2.0 constructor) whose events the program times itself, and
 * a queue made with NULL properties; NULL and given local sizes, a 2-D NDRange with an offset, a task, and
 * THREADS threads each launching on a queue of its own. With "fork" the process forks before touching OpenCL and
 * both processes run. Every launch is printed as "launch <pid> <name> <dims> <global> <local|->", every launch it
 * timed itself as "timed <pid> <name> <start> <end>", and at the end "launches <pid> <count>".
 */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        cl_int status_ = (call);                                                                      \
        if (status_ != CL_SUCCESS) {                                                                  \
            fprintf(stderr, "%s:%d: %s failed with %d\n", __FILE__, __LINE__, #call, (int)status_);    \
            exit(2);                                                                                  \
        }                                                                                             \
    } while (0)

static const char *sources[3] = {
    "kernel void scale(global float *x, float a) { x[get_global_id(0)] *= a; }\n",
    "kernel void axpy(global float *y, global const float *x, float a) {\n"
    "  size_t i = get_global_id(0); y[i] += a * x[i]; }\n"
    "kernel void sum_task(global float *y, int n) { float s = 0; for (int i = 0; i < n; ++i) s += y[i]; y[0] = s; }\n",
    "kernel void blur2d(global float *y, global const float *x, int w) {\n"
    "  int i = get_global_id(0), j = get_global_id(1);\n"
    "  y[j * w + i] = 0.25f * (x[j * w + i] + x[j * w + i + 1] + x[(j + 1) * w + i] + x[(j + 1) * w + i + 1]); }\n",
};

static cl_context context;
static cl_device_id device;
static cl_kernel scale_kernel, axpy_kernel, task_kernel, blur_kernel;
static cl_mem xbuf, ybuf;
static size_t n;
static int reps;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static int launches = 0;

static void said(const char *name, cl_uint dims, const size_t *global, const size_t *local)
{
    pthread_mutex_lock(&print_lock);
    printf("launch %d %s %u ", (int)getpid(), name, dims);
    for (cl_uint d = 0; d < dims; ++d)
        printf(d ? ",%zu" : "%zu", global[d]);
    printf(" ");
    if (local == NULL)
        printf("-");
    for (cl_uint d = 0; local && d < dims; ++d)
        printf(d ? ",%zu" : "%zu", local[d]);
    printf("\n");
    ++launches;
    pthread_mutex_unlock(&print_lock);
}

static cl_program build(const char *source)
{
    cl_int status;
    cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
    CHECK(status);
    CHECK(clBuildProgram(program, 1, &device, "", NULL, NULL));
    return program;
}

static void *thread_body(void *unused)
{
    (void)unused;
    cl_int status;
    cl_command_queue queue = clCreateCommandQueueWithProperties(context, device, NULL, &status);
    CHECK(status);
    cl_kernel kernel = clCreateKernel(build(sources[0]), "scale", &status);  /* a kernel per thread: args are state */
    CHECK(status);
    float a = 1.0001f;
    CHECK(clSetKernelArg(kernel, 0, sizeof(cl_mem), &xbuf));
    CHECK(clSetKernelArg(kernel, 1, sizeof(float), &a));
    size_t global[1] = {n}, local[1] = {32};
    for (int r = 0; r < reps; ++r) {
        CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, global, local, 0, NULL, NULL));
        said("scale", 1, global, local);
    }
    CHECK(clFinish(queue));
    clReleaseKernel(kernel);
    clReleaseCommandQueue(queue);
    return NULL;
}

static int run(int threads)
{
    cl_platform_id platform;
    cl_int status;
    CHECK(clGetPlatformIDs(1, &platform, NULL));
    CHECK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    CHECK(status);
    cl_program programs[3];
    for (int p = 0; p < 3; ++p)
        programs[p] = build(sources[p]);
    scale_kernel = clCreateKernel(programs[0], "scale", &status);
    CHECK(status);
    axpy_kernel = clCreateKernel(programs[1], "axpy", &status);
    CHECK(status);
    task_kernel = clCreateKernel(programs[1], "sum_task", &status);
    CHECK(status);
    blur_kernel = clCreateKernel(programs[2], "blur2d", &status);
    CHECK(status);
    size_t side = 64;
    size_t bytes = (n > (side + 1) * (side + 1) ? n : (side + 1) * (side + 1)) * sizeof(float);
    float *host = calloc(bytes / sizeof(float), sizeof(float));
    for (size_t i = 0; i < bytes / sizeof(float); ++i)
        host[i] = 1.0f;
    xbuf = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host, &status);
    CHECK(status);
    ybuf = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host, &status);
    CHECK(status);

    cl_command_queue plain = clCreateCommandQueue(context, device, 0, &status);
    CHECK(status);
    cl_queue_properties timed_properties[] = {
        CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue timed = clCreateCommandQueueWithProperties(context, device, timed_properties, &status);
    CHECK(status);
    cl_command_queue bare = clCreateCommandQueueWithProperties(context, device, NULL, &status);
    CHECK(status);

    float a = 0.5f;
    int w = (int)side, count = (int)(n < 4096 ? n : 4096);
    CHECK(clSetKernelArg(scale_kernel, 0, sizeof(cl_mem), &xbuf));
    CHECK(clSetKernelArg(scale_kernel, 1, sizeof(float), &a));
    CHECK(clSetKernelArg(axpy_kernel, 0, sizeof(cl_mem), &ybuf));
    CHECK(clSetKernelArg(axpy_kernel, 1, sizeof(cl_mem), &xbuf));
    CHECK(clSetKernelArg(axpy_kernel, 2, sizeof(float), &a));
    CHECK(clSetKernelArg(task_kernel, 0, sizeof(cl_mem), &ybuf));
    CHECK(clSetKernelArg(task_kernel, 1, sizeof(int), &count));
    CHECK(clSetKernelArg(blur_kernel, 0, sizeof(cl_mem), &ybuf));
    CHECK(clSetKernelArg(blur_kernel, 1, sizeof(cl_mem), &xbuf));
    CHECK(clSetKernelArg(blur_kernel, 2, sizeof(int), &w));

    size_t global[1] = {n}, local[1] = {64};
    size_t global2[2] = {side, side / 2}, local2[2] = {8, 8}, offset2[2] = {0, 8};
    for (int r = 0; r < reps; ++r) {
        cl_event released;
        CHECK(clEnqueueNDRangeKernel(plain, scale_kernel, 1, NULL, global, local, 0, NULL, &released));
        CHECK(clReleaseEvent(released));  /* released before it completes: the interposer must keep it alive */
        said("scale", 1, global, local);
        CHECK(clEnqueueNDRangeKernel(plain, axpy_kernel, 1, NULL, global, NULL, 0, NULL, NULL));
        said("axpy", 1, global, NULL);
        cl_event own;
        CHECK(clEnqueueNDRangeKernel(timed, blur_kernel, 2, offset2, global2, local2, 0, NULL, &own));
        said("blur2d", 2, global2, local2);
        CHECK(clWaitForEvents(1, &own));
        cl_ulong start, end;
        CHECK(clGetEventProfilingInfo(own, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
        CHECK(clGetEventProfilingInfo(own, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
        printf("timed %d blur2d %llu %llu\n", (int)getpid(), (unsigned long long)start, (unsigned long long)end);
        CHECK(clReleaseEvent(own));
        CHECK(clEnqueueTask(bare, task_kernel, 0, NULL, NULL));
        size_t one[1] = {1};
        said("sum_task", 1, one, one);
    }
    CHECK(clFinish(plain));
    CHECK(clFinish(bare));
    pthread_t workers[16];
    for (int t = 0; t < threads && t < 16; ++t)
        pthread_create(&workers[t], NULL, thread_body, NULL);
    for (int t = 0; t < threads && t < 16; ++t)
        pthread_join(workers[t], NULL);
    clReleaseCommandQueue(plain);
    clReleaseCommandQueue(timed);
    clReleaseCommandQueue(bare);
    printf("launches %d %d\n", (int)getpid(), launches);
    free(host);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s N REPS [THREADS] [fork]\n", argv[0]);
        return 1;
    }
    n = (size_t)strtoul(argv[1], NULL, 10);
    reps = atoi(argv[2]);
    int threads = argc > 3 ? atoi(argv[3]) : 0;
    if (argc > 4 && strcmp(argv[4], "fork") == 0) {
        fflush(stdout);
        pid_t child = fork();
        if (child == 0)
            return run(threads);
        int code = run(threads);
        int status = 0;
        waitpid(child, &status, 0);
        return code || !WIFEXITED(status) || WEXITSTATUS(status);
    }
    return run(threads);
}
