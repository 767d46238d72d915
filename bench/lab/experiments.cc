// The study's 37 experiments as the lab declares them, by study number: what each asks, what the
// study published, where the headline figure should land and why, and the validity checks its
// run must report. One table, so the declarations read side by side; each experiment's code
// (its run and its verdict) registers itself by id in a bench/lab/exp_<group>.cc file.
#include "registry.h"

namespace simdex::lab_bench {

const std::vector<experiment>& declared() {
  static const std::vector<experiment> rows = {
      {
          .id = "stride",
          .study = 1,
          .group = "memory",
          .title = "Stride access",
          .question =
              "How does the cost per item grow when items are read at growing strides through "
              "an array larger than the caches?",
          .study_figure = "stride 1/4/16/64 -> 3.49G / 3.33G / 1.01G / 0.346G items/s",
          .range = {3, 20, "x",
                    "a 64-byte stride pulls a whole line per 4-byte item: up to 16x the traffic of "
                    "sequential reads, less where the sequential loop is itself not memory-bound"},
          .checks = {"work_done", "below_memcpy"},
      },
      {
          .id = "pointer_chase",
          .study = 2,
          .group = "memory",
          .title = "Pointer chasing",
          .question =
              "How much slower is a chain of dependent loads to random lines than streaming "
              "the same memory?",
          .study_figure =
              "sequential 16.7G items/s vs pointer chasing 12.8M items/s (uint32 items)",
          .range =
              {70, 260, "ns/access",
               "DRAM load-to-use: 80-120 ns on bare-metal servers, 150-260 ns in KVM guests with "
               "nested paging"},
          .checks = {"on_chain", "huge_pages", "bytes_touched", "below_memcpy", "spread"},
      },
      {
          .id = "false_sharing",
          .study = 3,
          .group = "concurrency",
          .title = "False sharing",
          .question = "How much slower do two threads incrementing their own counters run when the "
                      "counters share a cache line?",
          .study_figure = "adjacent 155.7M vs padded 509.4M items/s (3.3x)",
          .range =
              {3, 10, "x",
               "bare-metal x86, relaxed fetch_add: 3-10x (each increment must take the line from "
               "the other core); a guest whose vCPUs take turns shows about 1x"},
          .checks = {"work_done", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "aos_soa",
          .study = 4,
          .group = "memory",
          .title = "AoS vs SoA",
          .question =
              "Does a struct-of-arrays layout beat an array of 64-byte structs when a loop uses "
              "only some fields, and not when it uses all?",
          .study_figure =
              "base case AoS 1.318G vs SoA 1.303G; wide struct, two fields used: AoS 0.983G "
              "vs SoA 1.396G items/s",
          .range =
              {1.3, 4.5, "x",
               "two of eight fields: SoA moves 16 of every 64 bytes, up to 4x less traffic when "
               "the loop is memory-bound"},
          .checks = {"work_done", "below_memcpy"},
      },
      {
          .id = "mutex_atomic",
          .study = 5,
          .group = "concurrency",
          .title = "Mutex vs atomic",
          .question = "How do one atomic counter and one mutex-guarded counter scale as threads "
                      "contend for them, timed on the wall clock?",
          .study_figure =
              "atomic 1/2/4 threads 571.9M / 163.3M / 44.9M, mutex 1/2/4 threads 221.0M / "
              "62.7M / 6.67M items/s (CPU-time rates)",
          .range =
              {1.5, 10, "ns",
               "uncontended lock xadd: 2-4 ns on AMD and Apple cores, 5-8 ns on Intel servers; "
               "6.7 ns measured in this class of VM"},
          .checks = {"work_done", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "cache_levels",
          .study = 6,
          .group = "memory",
          .title = "Cache levels",
          .question =
              "What does a dependent load cost in each cache level and in DRAM, with 4 KiB and "
              "2 MiB pages?",
          .study_figure = "4KB 1.01G -> 256KB 280M -> 1MB 206M -> 16MB 88M -> 64MB 12.7M items/s "
                          "(uint32 items)",
          .range = {0.8, 3.0, "ns",
                    "L1D load-to-use 4-5 cycles: 1-1.5 ns bare metal, 2.4-2.8 ns measured in this "
                    "class of VM"},
          .checks = {"on_chain", "huge_pages", "bytes_touched", "below_memcpy"},
      },
      {
          .id = "ilp",
          .study = 7,
          .group = "memory",
          .title = "ILP",
          .question = "How much faster do independent chains of the same operations run than one "
                      "dependent chain?",
          .study_figure = "dependent 670M vs independent 2.30G items/s (3.4x)",
          .range = {2.5, 4.5, "x",
                    "64-bit imul: 3 cycles latency, 1 per cycle throughput on recent x86 cores, so "
                    "enough independent chains approach 3x"},
          .checks = {"work_done"},
      },
      {
          .id = "branch",
          .study = 8,
          .group = "memory",
          .title = "Branch predictability",
          .question =
              "What does an unpredictable branch cost, and did the study's loop have a branch?",
          .study_figure = "always-taken 7.49G, alternating 7.55G, pseudo-random 7.56G, branchless "
                          "7.88G items/s: \"no strong signal\"",
          .range =
              {8, 30, "cycles",
               "branch misprediction: about 11-20 cycles on recent x86 cores (Zen 4 ~13, Golden "
               "Cove ~17), more when the clock estimate is depressed by a busy host"},
          .checks = {"work_done", "branch_present"},
      },
      {
          .id = "inlining",
          .study = 9,
          .group = "language",
          .title = "Inlining effects",
          .question =
              "What does a call that is not inlined cost, in a dependent chain (the study's "
              "loop) and among independent calls?",
          .study_figure =
              "forced inline 1.22G, forced noinline 1.23G, function pointer 1.24G items/s",
          .range =
              {0.8, 1.6, "x",
               "a dependent chain of xor, multiply and add takes ~5 cycles per step; a call and "
               "return overlap it, so a real call costs little more"},
          .checks = {"call_shape", "per_call", "work_done"},
      },
      {
          .id = "associativity",
          .study = 10,
          .group = "memory",
          .title = "Cache associativity",
          .question = "Do a few lines that map to one cache set miss once they outnumber its ways, "
                      "though the cache is nearly empty?",
          .study_figure =
              "friendly lines=64: 928M items/s vs conflict lines=64: 254M items/s; sharp "
              "drop at 32/64 lines",
          .range = {1.8, 6, "x",
                    "an L1 hit (4-5 cycles) against an L2 hit (12-16 cycles) once the set's ways "
                    "are exceeded"},
          .checks = {"on_chain"},
      },
      {
          .id = "queue",
          .study = 11,
          .group = "concurrency",
          .title = "Queue",
          .question =
              "Does a single-producer ring beat a mutex-guarded queue between two threads, and "
              "how much do batching and the waiting policy matter?",
          .study_figure = "mutex (batch=64, backoff=yield) 111.6M vs SPSC (batch=8, backoff=yield) "
                          "174.1M ops/s (aggregate mean)",
          .range = {1.2, 20, "x",
                    "a ring moves a batch with two cache-line transfers, a mutex queue adds a lock "
                    "line and often a futex sleep per side"},
          .checks = {"delivered", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "memory_pool",
          .study = 12,
          .group = "language",
          .title = "Memory pool",
          .question =
              "With threads allocating and freeing 128-byte blocks, how do new/delete, a pool "
              "shared behind a mutex and a pool per thread compare?",
          .study_figure = "new/delete 109.3M, locked pool 21.3M, thread-local pool 103.1M ops/s (4 "
                          "threads)",
          .range =
              {1.5, 40, "x",
               "a free-list pop and push take a few cycles; a mutex adds two atomic "
               "read-modify-writes per operation uncontended and a cache-line transfer between "
               "cores when contended"},
          .checks = {"placement", "blocks_valid", "work_done"},
      },
      {
          .id = "mmap_read",
          .study = 13,
          .group = "memory",
          .title = "mmap vs read / pread",
          .question =
              "Reading every byte of a file in the page cache, how do read(), random pread() and "
              "a mapping compare?",
          .study_figure =
              "sequential read 6.70 GiB/s, random pread 5.51 GiB/s, sequential mmap 676.4 "
              "GiB/s",
          .range = {0.7, 4, "x",
                    "read() copies each page once more than a scan of a mapping; both are bound by "
                    "memory bandwidth, so the mapping wins by a small factor, never 100x"},
          .checks = {"bytes_touched", "below_memcpy"},
      },
      {
          .id = "memory_order",
          .study = 14,
          .group = "concurrency",
          .title = "Memory order",
          .question =
              "What does each C++ memory order cost, and which reorderings can two threads "
              "actually observe on this ISA (message passing and store buffering litmus tests)?",
          .study_figure =
              "fetch_add 1 thread relaxed/acq_rel/seq_cst 527.5M/527.5M/528.1M; flag "
              "hand-off acq_rel 25.9M vs seq_cst 26.4M; SPSC ring 30.9M vs 23.9M; MP relaxed "
              "bad reads 1.4 per 100k, release/acquire 0; SB both-zero relaxed 96.9k, "
              "release/acquire 96.7k, seq_cst 0 per 100k",
          .range =
              {1, 100000, "per 100k",
               "store buffering with relaxed stores is allowed by x86-TSO; how often it shows "
               "depends on how closely the harness lines the threads up (the study's Apple run: "
               "96.9k)"},
          .checks = {"raced", "x86_tso", "work_done", "delivered", "placement", "wall_clock"},
      },
      {
          .id = "thread_placement",
          .study = 15,
          .group = "concurrency",
          .title = "Thread placement",
          .question =
              "Does it matter for a producer-consumer transfer whether the two threads share "
              "a CPU or run on two, once the placement is verified to hold?",
          .study_figure = "default 29.9M, shared-placement hint 30.7M, split-placement hint 30.6M "
                          "ops/s; placement requests 0, placement verified 0",
          .range =
              {2, 1000, "x",
               "on one CPU a spinning consumer holds the CPU until its time slice ends, so the "
               "pair moves one ring-full per slice instead of streaming"},
          .checks = {"delivered", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "pipe_shm",
          .study = 16,
          .group = "concurrency",
          .title = "Pipe vs shared-memory handoff",
          .question =
              "How much faster than a pipe does a shared-memory mailbox pass small messages "
              "between two threads?",
          .study_figure = "pipe handoff 2.31M msgs/s vs shared-memory mailbox 10.6M msgs/s",
          .range =
              {2, 20, "x",
               "a pipe costs a write and a read system call per message (0.1-0.5 us each) plus "
               "wake-ups; a mailbox costs a cache-line round trip (0.1-0.3 us)"},
          .checks = {"delivered", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "dispatch",
          .study = 17,
          .group = "language",
          .title = "Dispatch cost",
          .question =
              "What do a function-pointer call and a virtual call cost against a template the "
              "compiler inlines, with one target and with four in random order?",
          .study_figure = "template 3.10G, function pointer 2.95G, virtual 1.14G items/s",
          .range = {0.7, 1.6, "x",
                    "a virtual call is a function-pointer call after two loads (vtable, slot) that "
                    "overlap other work; both predict well with one target"},
          .checks = {"call_shape", "per_call", "work_done"},
      },
      {
          .id = "callables",
          .study = 18,
          .group = "language",
          .title = "Callable abstraction",
          .question =
              "What do a lambda, a functor, a function pointer and a std::function cost per "
              "call, and which of them are calls at all?",
          .study_figure =
              "lambda 3.57G, functor 3.60G, function pointer 3.63G, std::function 1.23G "
              "items/s",
          .range =
              {0.8, 2.0, "x",
               "std::function's call is a test for emptiness and one indirect call to a stub that "
               "holds the inlined lambda: about one function-pointer call"},
          .checks = {"call_shape", "per_call", "work_done"},
      },
      {
          .id = "clock_overhead",
          .study = 19,
          .group = "language",
          .title = "Clock call overhead",
          .question = "What does reading the time cost through steady_clock, system_clock, "
                      "clock_gettime and gettimeofday, and does the call enter the kernel?",
          .study_figure =
              "steady_clock::now() 70.1M, system_clock::now() 65.6M, clock_gettime 73.9M, "
              "gettimeofday 98.2M calls/s",
          .range =
              {10, 60, "ns",
               "a vDSO read of the TSC-backed clock costs 15-30 ns on bare metal, more under a "
               "hypervisor's paravirtual clock; a clocksource without vDSO support costs a system "
               "call (hundreds of ns)"},
          .checks = {"per_call", "work_done", "clock_path"},
      },
      {
          .id = "mpmc_scaling",
          .study = 20,
          .group = "concurrency",
          .title = "MPSC and MPMC queue scaling",
          .question = "As producers and consumers are added, how do a mutex queue and a bounded "
                      "lock-free MPMC ring scale?",
          .study_figure = "MPSC (4P1C): mutex 8.10M, bounded MPMC 9.55M msgs/s; MPMC (4P4C): mutex "
                          "21.2M, bounded MPMC 7.46M msgs/s",
          .range =
              {0.3, 5, "x",
               "both serialize on one line (the lock or the producers' index); neither should be "
               "an order of magnitude ahead"},
          .checks = {"delivered", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "blocking_spinning",
          .study = 21,
          .group = "concurrency",
          .title = "Blocking vs spinning",
          .question = "How many hand-offs per second do two threads manage when the waiter spins, "
                      "yields or sleeps on a condition variable?",
          .study_figure = "spin 17.5M, yield 253.8k, condition variable 107.2k handoffs/s",
          .range =
              {2, 30, "us",
               "condition-variable ping-pong round trip across cores: 5-20 us (2-5 us when the "
               "peer stays hot); 24 us measured in this class of VM"},
          .checks = {"delivered", "context_switches", "placement", "wall_clock", "run_queue",
                     "overlap"},
      },
      {
          .id = "tlb",
          .study = 22,
          .group = "memory",
          .title = "TLB pressure",
          .question =
              "What does a dependent load cost when every access lands on a new page, with 4 "
              "KiB and 2 MiB pages?",
          .study_figure =
              "contiguous page walk 121.5M, page-stride 873.8M, random page walk 671.2M "
              "items/s",
          .range =
              {5, 150, "ns",
               "2 MiB pages save 10-40 ns per access on bare metal past the TLB's reach; under "
               "nested paging a 4 KiB miss walks two page tables and can cost far more"},
          .checks = {"on_chain", "huge_pages"},
      },
      {
          .id = "exceptions",
          .study = 23,
          .group = "language",
          .title = "Exception vs error code",
          .question =
              "What does an exception cost when nothing throws, when 1 call in 4096 throws, and "
              "per throw?",
          .study_figure =
              "error-code no-fail 3.50G, exception no-fail 2.66G, error-code rare-fail 2.46G, "
              "exception rare-fail 398M items/s",
          .range =
              {0.3, 20, "us",
               "a throw allocates the exception, unwinds through the unwinder's table lookup and "
               "runs the handler: about 1-2 us on Linux x86-64, more in a busy VM"},
          .checks = {"call_shape", "per_call", "work_done"},
      },
      {
          .id = "lock_variants",
          .study = 24,
          .group = "concurrency",
          .title = "Lock variants",
          .question =
              "How do std::mutex, a spinlock and a ticket lock compare with 1 to N threads, "
              "with a tiny and a larger critical section?",
          .study_figure =
              "work=1: 1 thread mutex 205M, spinlock 575M, ticket 528M; 4 threads 26.7M, "
              "3.18M, 4.33M. work=32: 1 thread 37.7M, 39.6M, 39.7M; 4 threads 4.77M, "
              "2.48M, 2.69M items/s (CPU-time rates)",
          .range =
              {8, 30, "ns",
               "uncontended std::mutex lock + unlock (two atomic RMWs): 10-25 ns on x86 servers, "
               "18.5 ns measured in this class of VM"},
          .checks = {"exclusive", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "mmap_write",
          .study = 25,
          .group = "memory",
          .title = "mmap private vs shared writes",
          .question =
              "Writing every byte of a mapped file: what do copy-on-write faults, rewriting "
              "private pages, shared pages and msync cost?",
          .study_figure =
              "private first-touch 7.27, private rewrite 48.5, shared without msync 26.2, "
              "shared with msync 11.9 GiB/s",
          .range = {2, 20, "x",
                    "a private first write takes a fault and a 4 KiB copy per page (~0.5-2 us), a "
                    "rewrite streams at memory bandwidth"},
          .checks = {"bytes_touched", "below_memcpy", "faults_per_page", "persisted"},
      },
      {
          .id = "pipe_socketpair",
          .study = 26,
          .group = "concurrency",
          .title = "Pipe vs socketpair",
          .question = "Between two threads, is a pipe cheaper per small message than a Unix stream "
                      "socketpair?",
          .study_figure = "pipe 2.43M msgs/s vs Unix stream socketpair 1.42M msgs/s",
          .range =
              {0.8, 3, "x",
               "a pipe write copies into a page of the pipe; a stream socket allocates a buffer "
               "per write and does socket accounting"},
          .checks = {"delivered", "placement", "wall_clock", "run_queue"},
      },
      {
          .id = "cross_thread_free",
          .study = 27,
          .group = "concurrency",
          .title = "Cross-thread free",
          .question =
              "What does it cost when one thread allocates and another frees, for the general "
              "allocators and for synchronized pools?",
          .study_figure = "new/delete 20.8M, malloc/free 25.6M, locked pool 7.01M, "
                          "pmr::synchronized_pool_resource 882.8k ops/s",
          .range =
              {0.5, 10, "x",
               "glibc frees a remote chunk into the freeing thread's cache and arena, so the "
               "allocating thread refills from a locked arena; a few x slower than local reuse"},
          .checks = {"delivered", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "variant_virtual",
          .study = 28,
          .group = "language",
          .title = "variant vs virtual hierarchy",
          .question =
              "Is std::visit over a std::variant faster than a virtual call, with the kinds in "
              "random order and alternating regularly?",
          .study_figure = "std::variant dispatch 553M vs virtual hierarchy 656M items/s",
          .range =
              {0.3, 2.0, "x",
               "both pay a mispredicted branch or indirect call per operation in random order; a "
               "switch and an indirect call cost about the same when mispredicted"},
          .checks = {"call_shape", "per_call", "work_done"},
      },
      {
          .id = "container_lookup",
          .study = 29,
          .group = "memory",
          .title = "Container lookup",
          .question =
              "Which of std::map, std::unordered_map and a sorted vector looks keys up fastest, "
              "in a small hot set and in a large set with misses?",
          .study_figure =
              "small hot set: map 123M, unordered_map 1.22G, sorted vector 59.8M items/s; "
              "large mixed set, 50% misses: map 15.5M, unordered_map 448M, sorted vector "
              "17.1M items/s",
          .range =
              {3, 40, "x",
               "a tree lookup in a set past the caches takes ~log2(n) dependent misses, a hash "
               "lookup about one or two"},
          .checks = {"work_done"},
      },
      {
          .id = "tcp_loopback",
          .study = 30,
          .group = "concurrency",
          .title = "TCP loopback",
          .question =
              "How do TCP over loopback and a Unix stream socket compare for a one-way stream "
              "and for request/response round trips?",
          .study_figure =
              "stream: TCP 1.57M vs Unix stream 1.54M msgs/s; ping-pong: TCP 45.5k vs Unix "
              "stream 209.6k round trips/s",
          .range =
              {8, 60, "us",
               "TCP loopback round trip with TCP_NODELAY: 10-30 us on bare metal, 41 us measured "
               "in this class of VM"},
          .checks = {"delivered", "placement", "wall_clock", "run_queue", "nodelay"},
      },
      {
          .id = "page_faults",
          .study = 31,
          .group = "memory",
          .title = "Page fault and mlock",
          .question =
              "What does the first touch of a page cost, and does locked memory write faster "
              "than prefaulted memory?",
          .study_figure = "first-touch 15.2 GiB/s, prefaulted 33.0 GiB/s, mlock path 129.9 GiB/s "
                          "(mlock_ok=1)",
          .range =
              {100, 3000, "ns",
               "an anonymous 4 KiB fault (trap, allocation, zeroing) costs a few hundred ns on "
               "bare metal, more under a hypervisor's nested paging"},
          .checks = {"bytes_touched", "below_memcpy", "faults_per_page", "mlock"},
      },
      {
          .id = "sequence_scan",
          .study = 32,
          .group = "memory",
          .title = "vector vs deque vs list",
          .question =
              "How fast do std::vector, std::deque and std::list iterate, and what does a list "
              "lose when its nodes are scattered?",
          .study_figure = "vector 12.7G, deque 3.23G, list 934M items/s",
          .range =
              {4, 60, "x",
               "a vector sum streams 4 bytes per item (vectorized); a list follows one pointer per "
               "item, prefetchable only while nodes lie in allocation order"},
          .checks = {"work_done"},
      },
      {
          .id = "allocators",
          .study = 33,
          .group = "language",
          .title = "Allocator variants",
          .question =
              "What do new/delete, malloc/free, the standard pmr resources and an arena pool "
              "cost per 128-byte block, and why did the study's pool take 68 us per block?",
          .study_figure =
              "new/delete 33.3M, malloc/free 44.3M, pmr::monotonic_buffer_resource 133.8M, "
              "pmr::unsynchronized_pool_resource 14.7k, arena pool 391.8M ops/s",
          .range =
              {0.2, 5, "x",
               "a pool resource serves fixed-size blocks from free lists, like malloc's thread "
               "cache; within a few times new/delete either way"},
          .checks = {"blocks_valid", "work_done"},
      },
      {
          .id = "allocators_mixed",
          .study = 34,
          .group = "language",
          .title = "Mixed-size allocator variants",
          .question = "With block sizes from 32 to 256 bytes in random order, how do new/delete, "
                      "malloc/free and the pmr pool compare?",
          .study_figure = "mixed-size new/delete 36.2M, malloc/free 47.7M, "
                          "pmr::unsynchronized_pool_resource 133.5M ops/s",
          .range =
              {0.3, 6, "x",
               "a pool hands out blocks from per-size free lists without malloc's bookkeeping; a "
               "fresh pool carves them from new chunks in order"},
          .checks = {"blocks_valid", "work_done"},
      },
      {
          .id = "dynamic_cast",
          .study = 35,
          .group = "language",
          .title = "dynamic_cast vs tag dispatch",
          .question =
              "What does a dynamic_cast chain cost against a switch on a type tag, with the kinds "
              "in random order and alternating?",
          .study_figure = "enum-tag dispatch 988.6M vs dynamic_cast dispatch 68.0M items/s",
          .range =
              {3, 40, "x",
               "a dynamic_cast is a library call that compares type_info objects along the class "
               "hierarchy (tens of cycles); a tag test is a load and a compare"},
          .checks = {"per_call", "work_done"},
      },
      {
          .id = "queue_message_size",
          .study = 36,
          .group = "concurrency",
          .title = "Queue message size",
          .question = "With 256-byte messages, how much does batching help a mutex queue and a "
                      "single-producer ring?",
          .study_figure =
              "256-byte payload, unbatched: mutex 23.2M msgs/s (5.93 GiB/s), SPSC 34.5M "
              "(8.83 GiB/s); batched by 8: mutex 40.3M (10.3 GiB/s), SPSC 36.5M (9.35 GiB/s)",
          .range =
              {1.2, 8, "x",
               "batching by 8 divides the lock's two acquisitions per message by 8; the copy of "
               "256 bytes per message stays"},
          .checks = {"delivered", "placement", "wall_clock", "run_queue", "overlap"},
      },
      {
          .id = "aliasing",
          .study = 37,
          .group = "memory",
          .title = "Aliasing effects",
          .question =
              "Does a restrict signature speed up a loop over separate arrays, and what does an "
              "output that overlaps its input cost, in place or shifted by one element?",
          .study_figure =
              "potential alias 10.11G, restrict-style no-alias 10.27G, output aliases input "
              "3.45G items/s",
          .range =
              {10, 200, "x",
               "a shift of one element turns the loop into a chain of store, forwarded load and "
               "float add (~8 cycles each) against several elements per cycle vectorized"},
          .checks = {"work_done"},
      },
  };
  return rows;
}

}  // namespace simdex::lab_bench
