//===- ThreadPool.cpp - the CPU runtime's persistent workers --------------===//
//
// Workers are started once per thread count and never joined: the pool is
// reached from generated code at any time, including from static
// destructors of the embedding program, so it must outlive them all.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace {

int initialThreads() {
  if (const char *env = std::getenv("FP4_CPU_THREADS")) {
    int n = std::atoi(env);
    if (n > 0)
      return n;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

/// Workers wait for a generation number to change, then take task indices
/// from a shared counter; the caller takes tasks too and waits until every
/// worker is done. Never destroyed (threads detached at exit), so no join
/// runs during static destruction.
class Pool {
public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i)
      std::thread([this] { work(); }).detach();
    workers = threads - 1;
  }

  int size() const { return workers + 1; }

  /// Runs fn(0) ... fn(count - 1). A second caller arriving while the pool
  /// is busy (two JIT calls from two threads) runs its tasks itself.
  void run(int64_t count, const std::function<void(int64_t)> &fn) {
    std::unique_lock<std::mutex> busy(runMutex, std::try_to_lock);
    if (!busy.owns_lock() || workers == 0 || count <= 1) {
      for (int64_t i = 0; i < count; ++i)
        fn(i);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      job = &fn;
      total = count;
      next.store(0);
      pending = workers;
      ++generation;
    }
    wake.notify_all();
    take(fn, count);
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [this] { return pending == 0; });
    job = nullptr;
  }

private:
  void take(const std::function<void(int64_t)> &fn, int64_t count) {
    for (int64_t i = next.fetch_add(1); i < count; i = next.fetch_add(1))
      fn(i);
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int64_t)> *fn;
      int64_t count;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return generation != seen; });
        seen = generation;
        fn = job;
        count = total;
      }
      take(*fn, count);
      std::lock_guard<std::mutex> lock(mutex);
      if (--pending == 0)
        done.notify_one();
    }
  }

  std::mutex runMutex, mutex;
  std::condition_variable wake, done;
  const std::function<void(int64_t)> *job = nullptr;
  std::atomic<int64_t> next{0};
  int64_t total = 0;
  int pending = 0;
  uint64_t generation = 0;
  int workers = 0;
};

std::atomic<int> threadSetting{0};

Pool &pool() {
  // One pool per thread count ever asked for, kept for the process's life:
  // a pool's detached workers wait on its members, so it can never be freed,
  // and going back to an earlier count (set_threads(1), then 2 again) reuses
  // its pool instead of parking another set of threads. The list is reached
  // from a global, so LeakSanitizer sees the pools as live, which they are.
  static std::mutex m;
  static std::vector<Pool *> *pools = new std::vector<Pool *>();
  std::lock_guard<std::mutex> lock(m);
  int want = fp4::cpu::poolThreads();
  for (Pool *p : *pools)
    if (p->size() == want)
      return *p;
  pools->push_back(new Pool(want));
  return *pools->back();
}

} // namespace

int fp4::cpu::poolThreads() {
  int n = threadSetting.load();
  if (n > 0)
    return n;
  int initial = initialThreads();
  int expected = 0;
  threadSetting.compare_exchange_strong(expected, initial);
  return threadSetting.load();
}

void fp4::cpu::setPoolThreads(int n) {
  if (n >= 1)
    threadSetting.store(n);
}

void fp4::cpu::parallelFor(int64_t count,
                           const std::function<void(int64_t)> &fn) {
  pool().run(count, fn);
}
