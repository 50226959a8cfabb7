/* perfcast's OpenCL launch log: an LD_PRELOAD library that times every kernel launch of an unmodified program.
 *
 * Loaded before the ICD loader (or before Oclgrind's runtime), it defines the few entry points it needs and calls
 * the next definition of each (dlsym RTLD_NEXT), so every platform the program would see still answers.
 *   - Every command queue the program creates gets CL_QUEUE_PROFILING_ENABLE added to its properties (both the
 *     1.x and the 2.0 constructor; out-of-order queues keep their other properties; device-side queues are left
 *     alone). If a device refuses profiling the queue is created as asked and its launches are logged untimed.
 *   - Each clEnqueueNDRangeKernel / clEnqueueTask is passed through, then its event (the program's own, retained,
 *     or one of ours when the program asked for none) gets a completion callback. The callback reads the event's
 *     four timestamps and appends one line to the log; it never waits, so the program's synchronisation is its own.
 *   - The log is text, one file per process ($PERFCAST_LAUNCH_LOG.<pid>, so forked and exec'd children each
 *     write their own), each line written whole with one write(2) on an O_APPEND file: nothing sits in a buffer
 *     when the program is killed, and lines from several threads never interleave.
 * Without PERFCAST_LAUNCH_LOG the library only passes calls through.
 *
 * Lines (tab-separated; the first names the format):
 *   #perfcast-launch-log 2 <pid> <ppid>
 *   Q <queue> <properties asked> <properties set> <device name>
 *   P <program> <build options>   (before the first launch of a kernel of that program, and again where the
 *     options found at a launch differ from the last ones logged for that handle: a handle the runtime reused)
 *   L <seq> <queue> <thread> <dims> <global x,y,z> <local x,y,z or -> <offset x,y,z or -> <queued> <submit> <start>
 *     <end> <status> <faults> <program> <kernel name>   (times in ns of the device's clock; status: 0 done, <0 an
 *     error; faults: the process's minor page faults from the launch's CL_RUNNING callback to its CL_COMPLETE one,
 *     -1 where the runtime gave no CL_RUNNING callback, or gave it late: see launch_running)
 *   X <seq> <queue> <thread> <dims> <global> <local> <offset> <error> <program> <kernel name>   (the enqueue failed)
 * The program names the build a kernel came from: a program that builds one source twice (SHOC's md, in single
 * and in double precision) launches two kernels of one name, told apart by their programs' options.
 * The faults are the pages the operating system mapped while the kernel ran: on a CPU device, the pages of a
 * buffer the kernel touched first (docs/models.md §3.7). They are the whole process's, so a host thread that
 * faults while a kernel runs adds its own.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define LOG_FORMAT 3
#define OPTIONS_BYTES 512
#define PROGRAMS_KEPT 256
#define NAME_MAX_BYTES 256
#define LINE_BYTES 1024

typedef cl_command_queue (*create_queue_fn)(cl_context, cl_device_id, cl_command_queue_properties, cl_int *);
typedef cl_command_queue (*create_queue_props_fn)(cl_context, cl_device_id, const cl_queue_properties *, cl_int *);
typedef cl_int (*enqueue_ndrange_fn)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                                     const size_t *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*enqueue_task_fn)(cl_command_queue, cl_kernel, cl_uint, const cl_event *, cl_event *);

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static pid_t log_pid = 0;      /* the process that opened log_fd: a forked child opens its own */
static int log_disabled = 0;   /* no PERFCAST_LAUNCH_LOG, or it could not be opened */
static unsigned long sequence = 0;
static long pending = 0;       /* launches whose completion has not been seen yet */
/* Set while this thread is inside one of our entry points: a runtime that implements clEnqueueTask with
 * clEnqueueNDRangeKernel (Oclgrind does) reaches our definition again, and that launch is already logged. */
static __thread int inside = 0;

static void *next_symbol(const char *name)
{
    void *symbol = dlsym(RTLD_NEXT, name);
    if (symbol == NULL)
        fprintf(stderr, "perfcast launch log: no %s after this library (is an OpenCL library linked?)\n", name);
    return symbol;
}

static void write_whole(int fd, const char *text, size_t length)
{
    while (length > 0) {
        ssize_t written = write(fd, text, length);
        if (written <= 0)
            return;
        text += written;
        length -= (size_t)written;
    }
}

/* The log of this process, opened on first use (and again in a forked child); -1 when there is none. */
static int log_file(void)
{
    pid_t pid = getpid();
    if (log_disabled)
        return -1;
    if (log_fd >= 0 && log_pid == pid)
        return log_fd;
    pthread_mutex_lock(&log_lock);
    if (log_fd < 0 || log_pid != pid) {
        const char *prefix = getenv("PERFCAST_LAUNCH_LOG");
        char path[4096];
        if (prefix == NULL || *prefix == '\0' || snprintf(path, sizeof path, "%s.%d", prefix, (int)pid) >= (int)sizeof path) {
            log_disabled = 1;
        } else {
            /* A child inherits the parent's descriptor: close its copy, open the child's own file. */
            if (log_fd >= 0)
                close(log_fd);
            log_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
            log_pid = pid;
            if (log_fd < 0) {
                log_disabled = 1;
                fprintf(stderr, "perfcast launch log: cannot open %s\n", path);
            } else {
                char header[128];
                int n = snprintf(header, sizeof header, "#perfcast-launch-log\t%d\t%d\t%d\n", LOG_FORMAT, (int)pid,
                                 (int)getppid());
                write_whole(log_fd, header, (size_t)n);
                __atomic_store_n(&pending, 0, __ATOMIC_SEQ_CST);
            }
        }
    }
    pthread_mutex_unlock(&log_lock);
    return log_disabled ? -1 : log_fd;
}

static void log_line(const char *text, int length)
{
    int fd = log_file();
    if (fd >= 0 && length > 0)
        write_whole(fd, text, (size_t)(length < LINE_BYTES ? length : LINE_BYTES - 1));
}

/* What a launch was, kept until its event completes. */
struct launch {
    unsigned long seq;
    const void *queue;
    long thread;
    cl_uint dims;
    size_t global[3], local[3], offset[3];
    int has_local, has_offset;
    const void *program;
    char name[NAME_MAX_BYTES];
    long faults_at_start;  /* the process's minor faults at the CL_RUNNING callback */
    long long running_at[2];  /* ns of CLOCK_MONOTONIC_RAW and CLOCK_MONOTONIC at that callback */
    int running_seen;
    int refs;  /* the callbacks still to come: the last one frees the record (the spec orders none of them) */
};

/* One callback done with `l`: the last frees it. */
static void release_launch(struct launch *l)
{
    if (__atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(l);
}

static long minor_faults(void)
{
    struct rusage usage;
    return getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_minflt : 0;
}

/* The host clocks a device's timer may be (PoCL's CPU device: CLOCK_MONOTONIC_RAW), read now, in ns. */
static const clockid_t host_clocks[2] = {CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC};

static void host_times(long long out[2])
{
    for (int c = 0; c < 2; ++c) {
        struct timespec now;
        out[c] = clock_gettime(host_clocks[c], &now) == 0 ? (long long)now.tv_sec * 1000000000LL + now.tv_nsec : -1;
    }
}

/* Whether the CL_RUNNING callback came so late that the faults counted from it miss part of the launch's own.
 * A runtime delivers callbacks from its own thread; on a machine whose cores all run the kernel's work-groups that
 * thread may wait, and the faults the kernel made before the callback are then not counted (seen on a 2-core VM
 * with PoCL: 1,809 of a fresh buffer's 4,096 pages). Where the device's timer is one of the host's clocks, the
 * callback's lateness past the start is known; past a twentieth of the run (and 20 us) the count is not the
 * launch's. The timer is taken to be the clock that reads the least time past the end the completion callback
 * reads, within a second: the two clocks drift apart (CLOCK_MONOTONIC is slewed, by 0.3 s on that VM), so the
 * other one would read every launch late. Where they differ by less than the completion callback's own delay the
 * choice may be the wrong one, and the lateness is off by at most that difference. A timer that is neither clock,
 * or a completion callback a second or more late, is not judged: the count stands as read. */
static int running_seen_late(const struct launch *l, cl_ulong start, cl_ulong end)
{
    if (end <= start)
        return 0;
    long long now[2];
    host_times(now);
    int clock = -1;
    long long best = 1000000000LL;
    for (int c = 0; c < 2; ++c) {
        long long after = now[c] - (long long)end;
        if (now[c] >= 0 && l->running_at[c] >= 0 && after >= 0 && after < best) {
            best = after;
            clock = c;
        }
    }
    if (clock < 0)
        return 0;
    long long late = l->running_at[clock] - (long long)start;
    long long allowed = (long long)(end - start) / 20;
    return late > (allowed > 20000 ? allowed : 20000);
}

/* The build options last logged per program handle (a P line), so that each is logged once, and again where a
 * handle comes back with other options. Past PROGRAMS_KEPT handles the oldest slot is reused (a P line again). */
static pthread_mutex_t program_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *program_handles[PROGRAMS_KEPT];
static char program_options[PROGRAMS_KEPT][OPTIONS_BYTES];
static unsigned programs_seen = 0;

static void note_program(cl_command_queue queue, cl_program program)
{
    char options[OPTIONS_BYTES] = "";
    cl_device_id device = NULL;
    size_t size = 0;
    /* Called at every launch: one query into the stack buffer; only options longer than it take a second query
     * into the heap (and are cut to it). */
    if (clGetCommandQueueInfo(queue, CL_QUEUE_DEVICE, sizeof device, &device, NULL) == CL_SUCCESS
        && clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_OPTIONS, sizeof options, options, &size)
               != CL_SUCCESS) {
        options[0] = '\0';
        char *text = size > sizeof options ? malloc(size + 1) : NULL;
        if (text != NULL) {
            if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_OPTIONS, size, text, NULL) == CL_SUCCESS) {
                text[size] = '\0';
                snprintf(options, sizeof options, "%s", text);
            }
            free(text);
        }
    }
    options[sizeof options - 1] = '\0';
    for (char *c = options; *c; ++c)  /* one field */
        if (*c == '\t' || *c == '\n' || *c == '\r')
            *c = ' ';
    pthread_mutex_lock(&program_lock);
    unsigned kept = programs_seen < PROGRAMS_KEPT ? programs_seen : PROGRAMS_KEPT;
    int known = 0;
    for (unsigned i = 0; i < kept; ++i) {
        if (program_handles[i] == program) {
            known = strcmp(program_options[i], options) == 0 ? 1 : -1;
            if (known < 0)
                snprintf(program_options[i], OPTIONS_BYTES, "%s", options);
            break;
        }
    }
    if (known == 0) {
        unsigned slot = programs_seen++ % PROGRAMS_KEPT;
        program_handles[slot] = program;
        snprintf(program_options[slot], OPTIONS_BYTES, "%s", options);
    }
    if (known <= 0) {  /* logged under the lock: a launch line of this program cannot come first */
        char line[LINE_BYTES];
        int n = snprintf(line, sizeof line, "P\t%p\t%s\n", (const void *)program, options);
        log_line(line, n);
    }
    pthread_mutex_unlock(&program_lock);
}

static int sizes_text(char *out, size_t room, const size_t *values, cl_uint dims, int present)
{
    if (!present)
        return snprintf(out, room, "-");
    int n = 0;
    for (cl_uint d = 0; d < dims && d < 3; ++d)
        n += snprintf(out + n, room - (size_t)n, d ? ",%zu" : "%zu", values[d]);
    return n;
}

static int launch_text(char *out, size_t room, const struct launch *l)
{
    char global[96], local[96], offset[96];
    sizes_text(global, sizeof global, l->global, l->dims, 1);
    sizes_text(local, sizeof local, l->local, l->dims, l->has_local);
    sizes_text(offset, sizeof offset, l->offset, l->dims, l->has_offset);
    return snprintf(out, room, "%lu\t%p\t%ld\t%u\t%s\t%s\t%s", l->seq, l->queue, l->thread, l->dims, global, local,
                    offset);
}

static void CL_CALLBACK launch_done(cl_event event, cl_int status, void *data)
{
    struct launch *l = data;
    cl_ulong times[4] = {0, 0, 0, 0};
    static const cl_profiling_info which[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                                CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    cl_int outcome = status < 0 ? status : CL_SUCCESS;
    for (int i = 0; i < 4 && outcome == CL_SUCCESS; ++i)
        outcome = clGetEventProfilingInfo(event, which[i], sizeof(cl_ulong), &times[i], NULL);
    long faults = __atomic_load_n(&l->running_seen, __ATOMIC_ACQUIRE) ? minor_faults() - l->faults_at_start : -1;
    if (faults >= 0 && outcome == CL_SUCCESS && running_seen_late(l, times[2], times[3]))
        faults = -1;  /* an undercount is worse than none: the launch's group reads its other launches' counts */
    char line[LINE_BYTES], head[512];
    launch_text(head, sizeof head, l);
    int n = snprintf(line, sizeof line, "L\t%s\t%llu\t%llu\t%llu\t%llu\t%d\t%ld\t%p\t%s\n", head,
                     (unsigned long long)times[0], (unsigned long long)times[1], (unsigned long long)times[2],
                     (unsigned long long)times[3], (int)outcome, faults < 0 ? -1L : faults, l->program, l->name);
    log_line(line, n);
    __atomic_sub_fetch(&pending, 1, __ATOMIC_SEQ_CST);
    release_launch(l);
    clReleaseEvent(event);
}

/* The launch starts running: the faults from here to its completion are the ones it made (and any host thread's).
 * A runtime that calls it only after the completion callback (the spec allows it), or well after the start
 * (running_seen_late), leaves that launch's faults unknown (-1), never an undercount. */
static void CL_CALLBACK launch_running(cl_event event, cl_int status, void *data)
{
    (void)event;
    (void)status;
    struct launch *l = data;
    /* The tests' way to make a callback late, as a busy machine does: PERFCAST_LAUNCH_LOG_LATE_US microseconds. */
    const char *late = getenv("PERFCAST_LAUNCH_LOG_LATE_US");
    if (late != NULL && atol(late) > 0)
        usleep((useconds_t)atol(late));
    l->faults_at_start = minor_faults();
    host_times(l->running_at);
    __atomic_store_n(&l->running_seen, 1, __ATOMIC_RELEASE);
    release_launch(l);
}

static struct launch *describe(cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t *offset,
                               const size_t *global, const size_t *local)
{
    struct launch *l = calloc(1, sizeof *l);
    if (l == NULL)
        return NULL;
    l->seq = __atomic_fetch_add(&sequence, 1, __ATOMIC_SEQ_CST);
    l->queue = queue;
    l->thread = (long)syscall(SYS_gettid);
    l->dims = dims > 3 ? 3 : dims;  /* an invalid dims is the runtime's to refuse; read no more than 3 */
    for (cl_uint d = 0; d < l->dims; ++d) {
        l->global[d] = global ? global[d] : 1;
        l->local[d] = local ? local[d] : 0;
        l->offset[d] = offset ? offset[d] : 0;
    }
    l->has_local = local != NULL;
    l->has_offset = offset != NULL;
    if (clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof l->name, l->name, NULL) != CL_SUCCESS)
        snprintf(l->name, sizeof l->name, "?");
    cl_program program = NULL;
    if (clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof program, &program, NULL) == CL_SUCCESS && program != NULL) {
        l->program = program;
        note_program(queue, program);
    }
    for (char *c = l->name; *c; ++c)  /* one field: a name never breaks the line */
        if (*c == '\t' || *c == '\n')
            *c = ' ';
    return l;
}

/* After a launch was enqueued (or failed to be): log a failure at once, or wait for its event's completion. */
static void follow(struct launch *l, cl_int result, cl_event *program_event, cl_event *ours)
{
    if (l == NULL) {  /* out of memory: not logged, and our event not kept */
        if (result == CL_SUCCESS && program_event == NULL && *ours != NULL)
            clReleaseEvent(*ours);
        return;
    }
    if (result != CL_SUCCESS) {
        char line[LINE_BYTES], head[512];
        launch_text(head, sizeof head, l);
        int n = snprintf(line, sizeof line, "X\t%s\t%d\t%p\t%s\n", head, (int)result, l->program, l->name);
        log_line(line, n);
        free(l);
        return;
    }
    cl_event event = program_event ? *program_event : *ours;
    if (program_event)
        clRetainEvent(event);  /* the program may release its own event before it completes */
    __atomic_add_fetch(&pending, 1, __ATOMIC_SEQ_CST);
    /* Both references are taken before either callback is registered: a callback may run at once, on any thread. */
    __atomic_store_n(&l->refs, 2, __ATOMIC_RELEASE);
    if (clSetEventCallback(event, CL_RUNNING, launch_running, l) != CL_SUCCESS)
        release_launch(l);  /* no CL_RUNNING callback will come: the launch's faults stay unknown */
    if (clSetEventCallback(event, CL_COMPLETE, launch_done, l) != CL_SUCCESS) {
        __atomic_sub_fetch(&pending, 1, __ATOMIC_SEQ_CST);
        char line[LINE_BYTES], head[512];
        launch_text(head, sizeof head, l);
        int n = snprintf(line, sizeof line, "L\t%s\t0\t0\t0\t0\t%d\t-1\t%p\t%s\n", head, (int)CL_INVALID_EVENT,
                         l->program, l->name);
        log_line(line, n);
        release_launch(l);  /* the CL_RUNNING callback, where one is still to come, frees it */
        clReleaseEvent(event);
    }
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                                       const size_t *offset, const size_t *global,
                                                       const size_t *local, cl_uint waits, const cl_event *wait_list,
                                                       cl_event *event)
{
    static enqueue_ndrange_fn real = NULL;
    if (real == NULL && (real = (enqueue_ndrange_fn)next_symbol("clEnqueueNDRangeKernel")) == NULL)
        return CL_INVALID_OPERATION;
    if (inside || log_file() < 0)
        return real(queue, kernel, dims, offset, global, local, waits, wait_list, event);
    struct launch *l = describe(queue, kernel, dims, offset, global, local);
    cl_event ours = NULL;
    inside = 1;
    cl_int result = real(queue, kernel, dims, offset, global, local, waits, wait_list, event ? event : &ours);
    inside = 0;
    follow(l, result, event, &ours);
    return result;
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueTask(cl_command_queue queue, cl_kernel kernel, cl_uint waits,
                                              const cl_event *wait_list, cl_event *event)
{
    static enqueue_task_fn real = NULL;
    if (real == NULL && (real = (enqueue_task_fn)next_symbol("clEnqueueTask")) == NULL)
        return CL_INVALID_OPERATION;
    if (inside || log_file() < 0)
        return real(queue, kernel, waits, wait_list, event);
    static const size_t one[1] = {1};
    struct launch *l = describe(queue, kernel, 1, NULL, one, one);
    cl_event ours = NULL;
    inside = 1;
    cl_int result = real(queue, kernel, waits, wait_list, event ? event : &ours);
    inside = 0;
    follow(l, result, event, &ours);
    return result;
}

static void log_queue(cl_command_queue queue, cl_device_id device, unsigned long long asked, unsigned long long set)
{
    char name[NAME_MAX_BYTES] = "?", line[LINE_BYTES];
    if (clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL) != CL_SUCCESS)
        snprintf(name, sizeof name, "?");
    for (char *c = name; *c; ++c)
        if (*c == '\t' || *c == '\n')
            *c = ' ';
    int n = snprintf(line, sizeof line, "Q\t%p\t%llu\t%llu\t%s\n", (void *)queue, asked, set, name);
    log_line(line, n);
}

CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context context, cl_device_id device,
                                                               cl_command_queue_properties properties,
                                                               cl_int *error)
{
    static create_queue_fn real = NULL;
    if (real == NULL && (real = (create_queue_fn)next_symbol("clCreateCommandQueue")) == NULL) {
        if (error)
            *error = CL_INVALID_OPERATION;
        return NULL;
    }
    if (log_file() < 0)
        return real(context, device, properties, error);
    cl_command_queue_properties wanted = properties | CL_QUEUE_PROFILING_ENABLE;
    cl_command_queue queue = real(context, device, wanted, error);
    if (queue == NULL && wanted != properties) {  /* profiling refused: the program's queue as it asked */
        wanted = properties;
        queue = real(context, device, properties, error);
    }
    if (queue != NULL)
        log_queue(queue, device, (unsigned long long)properties, (unsigned long long)wanted);
    return queue;
}

CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(cl_context context,
                                                                             cl_device_id device,
                                                                             const cl_queue_properties *properties,
                                                                             cl_int *error)
{
    static create_queue_props_fn real = NULL;
    if (real == NULL
        && (real = (create_queue_props_fn)next_symbol("clCreateCommandQueueWithProperties")) == NULL) {
        if (error)
            *error = CL_INVALID_OPERATION;
        return NULL;
    }
    if (log_file() < 0)
        return real(context, device, properties, error);
    /* Copy the zero-terminated (name, value) list, OR-ing profiling into CL_QUEUE_PROPERTIES (added if absent). */
    cl_queue_properties list[64];
    size_t n = 0;
    unsigned long long asked = 0;
    int found = 0, on_device = 0;
    for (size_t i = 0; properties && properties[i] != 0 && n + 4 < 64; i += 2) {
        list[n] = properties[i];
        list[n + 1] = properties[i + 1];
        if (properties[i] == CL_QUEUE_PROPERTIES) {
            asked = (unsigned long long)properties[i + 1];
            on_device = (properties[i + 1] & CL_QUEUE_ON_DEVICE) != 0;
            list[n + 1] |= CL_QUEUE_PROFILING_ENABLE;
            found = 1;
        }
        n += 2;
    }
    if (!found) {
        list[n++] = CL_QUEUE_PROPERTIES;
        list[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    list[n] = 0;
    cl_command_queue queue = NULL;
    unsigned long long set = asked;
    if (!on_device) {  /* device-side queues are the kernels' own: not ours to change */
        queue = real(context, device, list, error);
        set = asked | CL_QUEUE_PROFILING_ENABLE;
    }
    if (queue == NULL) {
        set = asked;
        queue = real(context, device, properties, error);
    }
    if (queue != NULL)
        log_queue(queue, device, asked, set);
    return queue;
}

/* At exit: say how many launches never completed while the process lived (their times are lost). */
__attribute__((destructor)) static void log_end(void)
{
    if (log_fd < 0 || log_pid != getpid())
        return;
    char line[128];
    int n = snprintf(line, sizeof line, "E\t%lu\t%ld\n", __atomic_load_n(&sequence, __ATOMIC_SEQ_CST),
                     __atomic_load_n(&pending, __ATOMIC_SEQ_CST));
    log_line(line, n);
}
