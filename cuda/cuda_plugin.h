/* The C ABI of the CUDA timing plugin (libkj_cuda.so), which the worker loads with dlopen on CUDA jobs only.
 */
#ifndef KJ_CUDA_PLUGIN_H
#define KJ_CUDA_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

/* Bumped on every incompatible change of a function or struct below; the loader refuses a different value. */
#define KJ_CUDA_PLUGIN_ABI 4

#define KJ_CUDA_ERROR_CAPACITY 1024
#define KJ_CUDA_NAME_CAPACITY 256

#if defined(KJ_CUDA_BUILDING_PLUGIN)
#define KJ_CUDA_API __attribute__((visibility("default")))
#else
#define KJ_CUDA_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Every function that can fail returns one of these; nothing is ever thrown across this boundary. */
enum kj_cuda_status {
  KJ_CUDA_OK = 0,
  KJ_CUDA_INVALID_ARGUMENT = 1,
  KJ_CUDA_DRIVER_ERROR = 2,    /* a driver or CUPTI call failed; the message names the call and the error */
  KJ_CUDA_CALLBACK_FAILED = 3, /* the caller's callback returned non-zero; the caller keeps its own details */
  KJ_CUDA_UNAVAILABLE = 4,     /* no driver, or the plugin was built without CUPTI/NVML */
  KJ_CUDA_STATE_ERROR = 5,     /* e.g. kj_cuda_trace_end without kj_cuda_trace_begin */
  KJ_CUDA_OUT_OF_MEMORY = 6,   /* host memory */
  KJ_CUDA_INTERNAL_ERROR = 7
};

/* Filled on failure (message NUL-terminated, truncated to fit); may be NULL when the caller does not care. */
typedef struct kj_cuda_error {
  int32_t status;
  char message[KJ_CUDA_ERROR_CAPACITY];
} kj_cuda_error;

/* The timed code. Returns 0 on success; anything else stops the measurement with KJ_CUDA_CALLBACK_FAILED. */
typedef int (*kj_cuda_callback)(void* user);

typedef struct kj_cuda_device_result {
  int32_t ordinal;
  char name[KJ_CUDA_NAME_CAPACITY];
  char pci_bus_id[32]; /* "0000:3b:00.0" */
  int32_t cc_major;
  int32_t cc_minor;
  int32_t sm_count;
  int64_t l2_bytes;
  int64_t persisting_l2_max_bytes;
  int64_t total_memory_bytes;
  int32_t driver_version;       /* cuDriverGetVersion: 13000 = CUDA 13.0 */
  int32_t built_cuda_version;   /* CUDA_VERSION of the headers the plugin was built with */
  int32_t cupti_api_version;    /* CUPTI_API_VERSION at build time, 0 without CUPTI */
  int32_t has_cupti;            /* kernel traces available */
  int32_t has_nvml;             /* NVML snapshots available (built with nvml.h) */
  uint64_t default_flush_bytes; /* what kj_cuda_measure writes per flush when flush_bytes is 0: 3 x L2 */
  /* ABI 4: the peaks of the physical floor, and file-descriptor sharing */
  int64_t memory_clock_khz; /* peak memory clock (CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) */
  int32_t memory_bus_bits;  /* global memory bus width */
  int64_t sm_clock_khz;     /* CU_DEVICE_ATTRIBUTE_CLOCK_RATE (the boost clock) */
  int32_t can_share_fd;     /* memory can be exported as a POSIX file descriptor (kj_cuda_share_alloc) */
} kj_cuda_device_result;

/* A cold (or hot) measurement through kj::timing::measure_cold. Start from kj_cuda_measure_params_init. */
typedef struct kj_cuda_measure_params {
  uint64_t stream; /* CUstream as an integer (torch.cuda.current_stream().cuda_stream); 0 = legacy default */
  /* -1: the current context's device; else checked against it, or, when the thread has no current context,
     the device whose primary context is retained (-1 then means 0) */
  int32_t device;
  int32_t flush_l2; /* 1: memset flush_bytes on the stream before each sample, outside the events; 0: hot */
  uint64_t flush_bytes; /* 0: 3 x the device's L2 */
  /* kj::timing::measure_params */
  uint64_t warmup_min_calls;
  double warmup_min_ms;
  uint64_t warmup_max_calls;
  double max_wall_ms;
  /* kj::timing::stopping_params */
  uint64_t min_samples;
  double min_time_ms;
  double target_rel_ci;
  double max_time_ms;
  uint64_t max_samples;
  double confidence;
  /* Optional (ABI 2): called before each sample's flush, outside the events (fresh inputs). */
  kj_cuda_callback before_sample;
  void* before_sample_user;
} kj_cuda_measure_params;

/* KernelBench main's cuda_event protocol. Start from kj_cuda_kernelbench_params_init. */
typedef struct kj_cuda_kernelbench_params {
  uint64_t stream; /* as in kj_cuda_measure_params */
  int32_t device;
  uint32_t warmup;        /* 3: call + device sync each */
  uint32_t trials;        /* 100 reported trials */
  uint32_t discard_first; /* 1 extra trial first, not reported */
  uint64_t flush_bytes;   /* 256 MiB, as KernelBench's 32 Mi int64 tensor */
  /* Optional, called once between warmup and trials where KernelBench calls torch.cuda.empty_cache(). */
  kj_cuda_callback after_warmup;
  void* after_warmup_user;
} kj_cuda_kernelbench_params;

/* Samples in the order taken, warmup excluded. Arrays are owned by the plugin: kj_cuda_measure_result_free.
 */
typedef struct kj_cuda_measure_result {
  double* event_ms; /* [ms] cuEventElapsedTime(start, end) per sample */
  double* host_ms;  /* [ms] host wall time from before the start event to after the device-wide sync */
  uint64_t count;
  uint64_t warmup_calls;
  double warmup_ms;     /* [ms] sum of the warmup samples' event times (0 for kernelbench) */
  char stop_reason[32]; /* the stopping rule's reason, "wall_timeout", or "fixed_trials" (kernelbench) */
  uint64_t flush_bytes; /* bytes written by each flush; 0 when not flushed */
} kj_cuda_measure_result;

/* One kernel of a CUPTI trace. Strings live in the result's storage. */
typedef struct kj_cuda_kernel_record {
  const char* name;         /* demangled when possible, else as CUPTI reported it */
  const char* mangled_name; /* as CUPTI reported it */
  uint64_t start_ns;        /* CUPTI timestamps [ns] */
  uint64_t end_ns;
  uint32_t stream_id; /* CUPTI's stream id (unique within a context) */
  uint32_t correlation_id;
  uint32_t device_id;
  uint32_t context_id;
  int32_t grid[3];
  int32_t block[3];
  int32_t registers_per_thread;
  int32_t static_shared_bytes;
  int32_t dynamic_shared_bytes;
} kj_cuda_kernel_record;

typedef struct kj_cuda_trace_result {
  kj_cuda_kernel_record* kernels; /* in completion-buffer order; sort by start_ns when order matters */
  uint64_t count;
  uint32_t timed_stream_id; /* CUPTI's id of the stream passed to kj_cuda_trace_begin */
  uint64_t dropped_records; /* records CUPTI could not store: the trace is incomplete when non-zero */
  uint64_t begin_ns;        /* CUPTI timestamps of begin and end [ns] */
  uint64_t end_ns;
  void* storage; /* private: the names */
} kj_cuda_trace_result;

/* Every number is -1 when NVML could not read it (not supported on this board, no permission). */
typedef struct kj_cuda_nvml_result {
  int64_t sm_clock_mhz;
  int64_t sm_clock_max_mhz;
  int64_t mem_clock_mhz;
  int64_t mem_clock_max_mhz;
  int64_t temperature_c;
  int64_t power_mw;
  int64_t power_limit_mw;
  int64_t clocks_event_reasons; /* NVML's clocks-event (throttle) reason bit mask */
  char clocks_event_text[256];  /* the set bits by name, comma-separated; "none" when no bit is set */
  int64_t processes;            /* compute + graphics processes NVML lists on the device */
  int64_t other_processes;      /* of those, the ones whose pid is not this process */
} kj_cuda_nvml_result;

KJ_CUDA_API int32_t kj_cuda_plugin_abi(void);

/* Binds the calling thread to the current context (torch's), or retains device's primary context when none
   is current, and describes that context's device. Fails with KJ_CUDA_UNAVAILABLE without a driver. */
KJ_CUDA_API int kj_cuda_device_info(int32_t device, kj_cuda_device_result* info, kj_cuda_error* error);

KJ_CUDA_API void kj_cuda_measure_params_init(kj_cuda_measure_params* params);
KJ_CUDA_API void kj_cuda_kernelbench_params_init(kj_cuda_kernelbench_params* params);

/* Warmup then samples until the stopping rule is done; per sample: flush (stream-synchronized), host clock
   and start event, callback, end event, cuCtxSynchronize, elapsed time. On failure result holds nothing. */
KJ_CUDA_API int kj_cuda_measure(const kj_cuda_measure_params* params, kj_cuda_callback callback, void* user,
                                kj_cuda_measure_result* result, kj_cuda_error* error);
/* The same with nothing between the events: the smallest time the event timer reports (its floor). */
KJ_CUDA_API int kj_cuda_timer_floor(const kj_cuda_measure_params* params, kj_cuda_measure_result* result,
                                    kj_cuda_error* error);
/* KernelBench main's time_execution_with_cuda_event, step for step (see docs/cuda-timing.md). */
KJ_CUDA_API int kj_cuda_measure_kernelbench(const kj_cuda_kernelbench_params* params,
                                            kj_cuda_callback callback, void* user,
                                            kj_cuda_measure_result* result, kj_cuda_error* error);
KJ_CUDA_API void kj_cuda_measure_result_free(kj_cuda_measure_result* result);

/* A CUPTI kernel trace (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, all streams) of whatever runs in between.
   Never trace while taking timing samples. One trace at a time per process. */
KJ_CUDA_API int kj_cuda_trace_begin(uint64_t timed_stream, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_trace_end(kj_cuda_trace_result* result, kj_cuda_error* error);
KJ_CUDA_API void kj_cuda_trace_result_free(kj_cuda_trace_result* result);

/* Clocks, temperature, power, throttle reasons and GPU processes. KJ_CUDA_UNAVAILABLE without NVML. */
KJ_CUDA_API int kj_cuda_nvml_snapshot(int32_t device, kj_cuda_nvml_result* snapshot, kj_cuda_error* error);
/* The same, counting as "other" only processes that are neither this one nor one of `pids` (ABI 4: the judge
   names its runner's processes, whose pids NVML reports as the host sees them). */
KJ_CUDA_API int kj_cuda_nvml_snapshot_excluding(int32_t device, const uint32_t* pids, int32_t count,
                                                kj_cuda_nvml_result* snapshot, kj_cuda_error* error);

/* One timed call at a time (ABI 4), for a loop that someone else drives (the judge, a call per request):
   flush writes flush_bytes (0: 3 x L2) on the stream after resetting persisting L2, and waits for it; start
   reads the host clock and records the start event; stop synchronizes the context, records the end event and
   returns both times [ms]. */
KJ_CUDA_API int kj_cuda_sampler_create(uint64_t stream, uint64_t flush_bytes, uint64_t* sampler,
                                       uint64_t* flush_bytes_used, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_sampler_flush(uint64_t sampler, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_sampler_start(uint64_t sampler, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_sampler_stop(uint64_t sampler, double* event_ms, double* host_ms,
                                     kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_sampler_destroy(uint64_t sampler, kj_cuda_error* error);

/* Self-test helpers (tests, benchmarks, `kj doctor`): a non-blocking stream in the current context, and a
   one-thread kernel that spins for `ns` nanoseconds of %globaltimer on a stream. */
KJ_CUDA_API int kj_cuda_stream_create(uint64_t* stream, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_stream_destroy(uint64_t stream, kj_cuda_error* error);

/* Device memory shared between processes (ABI 2): the judge allocates an arena and exports its CUDA IPC
   handle; the candidate's runner opens the handle and writes its outputs there. */
KJ_CUDA_API int kj_cuda_mem_alloc(int32_t device, uint64_t bytes, uint64_t* ptr, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_mem_free(uint64_t ptr, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_ipc_get_handle(uint64_t ptr, unsigned char handle[64], kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_ipc_open(int32_t device, const unsigned char handle[64], uint64_t* ptr,
                                 kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_ipc_close(uint64_t ptr, kj_cuda_error* error);
/* Device memory shared by POSIX file descriptor (ABI 4; crosses PID namespaces): share_alloc allocates at
   least `bytes` (rounded to `*size`), maps it and exports `*fd`, which the caller sends and closes;
   share_import maps another process's descriptor (and closes it); share_free unmaps and releases either. */
KJ_CUDA_API int kj_cuda_share_alloc(int32_t device, uint64_t bytes, uint64_t* ptr, uint64_t* size,
                                    int32_t* fd, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_share_import(int32_t device, int32_t fd, uint64_t size, uint64_t* ptr,
                                     kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_share_free(uint64_t ptr, kj_cuda_error* error);
/* The device's free and total memory (cuMemGetInfo, ABI 3): what every process on it holds, sampled by the
   judge for an evaluation's peak. */
KJ_CUDA_API int kj_cuda_mem_info(int32_t device, uint64_t* free_bytes, uint64_t* total_bytes,
                                 kj_cuda_error* error);
/* Synchronizes the context, copies (device to device, or host to device for a parked output), synchronizes.
 */
KJ_CUDA_API int kj_cuda_copy_sync(uint64_t dst, uint64_t src, uint64_t bytes, kj_cuda_error* error);
KJ_CUDA_API int kj_cuda_spin(uint64_t stream, uint64_t ns, kj_cuda_error* error);

#ifdef __cplusplus
}
#endif

#endif /* KJ_CUDA_PLUGIN_H */
