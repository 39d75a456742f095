/*
 * absl_tune.cc — the one piece of C++ in the runtime: turns off abseil's
 * mutex deadlock detector for the whole process.
 *
 * Why: Debian builds abseil with deadlock detection on (its default when
 * NDEBUG is not defined), and the C core 1.51 takes absl::Mutex locks on
 * every call, so each lock records its ordering in a global graph
 * (synchronization_internal::GraphCycles). A perf profile of the runtime at
 * 1,000 quiet connections put 5-7% of its CPU there, and the gateway's at
 * 1,500 players 6% (issue 18); it checks lock ordering, which is a
 * debugging aid, never a behaviour of ours. absl exposes the switch only in
 * C++, hence this file. It is called from rpc_init before grpc_init, so no
 * lock is ever tracked.
 */
#include <absl/synchronization/mutex.h>

extern "C" void rpc__absl_tune(void)
{
    absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}
