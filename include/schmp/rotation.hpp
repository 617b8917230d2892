// Static-schedule programs: the model is cut into as many blocks as there are workers, and the blocks
// rotate around the workers in a ring, so that at any moment each block is held by exactly one worker
// and no two workers touch the same part of the model (the DSGD / STRADS schedule for matrix
// factorization and LDA).
//
// Worker w owns block w (its *home* block). A round is one full rotation: in sub-round s = 0..P-1
// worker w works on block (w + s) mod P with its own data, then passes that block to worker w - 1; after
// P sub-rounds every block is home again. What a round does is decided by the coordinator before it
// starts (the Step, shipped to every worker); what the workers learned in it is summed and handed back.
// Every rank is a worker; rank 0 is the coordinator too, since between rounds it has little to do.
//
//   struct P {
//     struct Config { ... };                 // plain data, filled by the app's main from its flags
//     struct Setup   { ... visit() };        // summed over workers once, before the first round
//     struct Step    { ... visit() };        // coordinator -> every worker: what a round does
//     struct Partial { ... visit() };        // summed over workers after each update round
//     struct Stats   { ... visit() };        // summed over workers after each evaluation round
//     struct Block   { ... visit() };        // one block of the travelling model
//     struct Part    { ... visit() };        // a worker's share of the final model
//
//     class Worker {
//      public:
//       Worker(const Config&, const WorkerContext&);      // context.count = P = number of blocks; reads
//                                                           // its part of the data (peers.hpp)
//       Setup setup() const;
//       void start(const Setup& summed);
//       Block make_block() const;                           // its home block, before the first round
//       void update(const Step&, std::uint32_t b, Block&);  // one sub-round of an update round
//       Partial end_update(const Step&, Block& home);       // after the rotation, home block in hand
//       void evaluate(std::uint32_t b, const Block&);       // optional: one sub-round of an evaluation
//       Stats end_evaluation(const Block& home);
//       Part part(const Block& home) const;                 // at the end of the run
//       void keep(const Block& home);                       // optional: see below
//       void prepare(std::uint32_t b, Block&);              // optional: see below
//       Shared share();  void absorb(const Shared& summed); // with a Shared message: see below
//     };
//     class Coordinator {
//      public:
//       Coordinator(const Config&, const Setup& summed, int blocks);
//       std::vector<std::string> trace_columns() const;
//       Step schedule();                                    // what the next round does
//       void aggregate(const Step&, const Partial& summed);
//       bool wants_evaluation() const;                      // after an update round: evaluate now?
//       Report report(const Stats& summed);
//       void finish(const Summary&, const std::vector<Part>& parts);   // parts[w] from worker w
//     };
//   };
//
// An evaluation is a rotation too when the worker has evaluate() (the model a worker's data needs is
// spread over every block); without it, each worker evaluates with its home block alone and no block
// moves. It
// comes when the coordinator's wants_evaluation() says so, and also every --eval_every rounds when that
// flag is given. When a report says `keep` (the model is the best so far, on held-out data say), every
// worker's keep() is called with its home block in hand, so that part() can hand over that model
// rather than the last one: early stopping.
//
// A worker whose blocks start from its data (LDA's word-topic counts: every worker's tokens count
// toward every block) has prepare(): before the first evaluation the framework runs one rotation
// calling it on each block in turn. A program with a `struct Shared { ... visit() }` (LDA's topic
// totals) has share() called after every update sub-round on every worker; the sum over workers goes
// back to every worker's absorb() before the blocks move on, so what it holds is at most one sub-round
// stale.
//
// Checkpoints (--checkpoint, --resume) need a `struct Saved` (a worker's share of the model state, with
// global ids), a `struct Progress` (the coordinator's own state) and five members:
//
//       Saved Worker::save(const Block& home) const;
//       void Worker::restore(const Saved& share, Block& home);  // after start(), once per share
//       void Worker::finish_restore(Block& home);               // then (also with no shares)
//       Progress Coordinator::save() const;
//       void Coordinator::restore(const Progress&);
//
// Resuming, every worker is handed the shares of all the workers of the checkpointed run, however many
// there were, one at a time and in worker order, to take its own part from each: no rank holds more
// than one of them at once. finish_restore() then checks that every part was found and makes what
// follows from it. A program with prepare() has its blocks filled again after.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <vector>

#include "schmp/program.hpp"

namespace schmp {

template <class P>
concept RotationProgram = requires(typename P::Worker& worker, const typename P::Worker& const_worker,
                                   typename P::Coordinator& coordinator,
                                   const typename P::Coordinator& const_coordinator,
                                   const typename P::Setup& setup, const typename P::Step& step,
                                   const typename P::Partial& partial, const typename P::Stats& stats,
                                   typename P::Block& block, const typename P::Block& const_block,
                                   const std::vector<typename P::Part>& parts, const Summary& summary,
                                   std::uint32_t b) {
  typename P::Config;
  { const_worker.setup() } -> std::same_as<typename P::Setup>;
  worker.start(setup);
  { const_worker.make_block() } -> std::same_as<typename P::Block>;
  worker.update(step, b, block);
  { worker.end_update(step, block) } -> std::same_as<typename P::Partial>;
  { worker.end_evaluation(const_block) } -> std::same_as<typename P::Stats>;
  { const_worker.part(const_block) } -> std::same_as<typename P::Part>;
  { const_coordinator.trace_columns() } -> std::same_as<std::vector<std::string>>;
  { coordinator.schedule() } -> std::same_as<typename P::Step>;
  coordinator.aggregate(step, partial);
  { const_coordinator.wants_evaluation() } -> std::convertible_to<bool>;
  { coordinator.report(stats) } -> std::same_as<Report>;
  coordinator.finish(summary, parts);
};

// Checkpoints of a rotation program (above).
template <class P>
concept SavesRotation = requires(const typename P::Worker& const_worker, typename P::Worker& worker,
                                 const typename P::Block& const_block, typename P::Block& block,
                                 const typename P::Saved& share,
                                 const typename P::Coordinator& const_coordinator,
                                 typename P::Coordinator& coordinator, const typename P::Progress& progress) {
  { const_worker.save(const_block) } -> std::same_as<typename P::Saved>;
  worker.restore(share, block);
  worker.finish_restore(block);
  { const_coordinator.save() } -> std::same_as<typename P::Progress>;
  coordinator.restore(progress);
};

}  // namespace schmp
