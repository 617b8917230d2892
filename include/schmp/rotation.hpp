// A rotation program: the model is cut into as many blocks as there are workers, and the blocks rotate
// around the workers in a ring, so that each block is held by one worker at a time and no two workers
// touch the same part of the model (the DSGD / STRADS schedule of MF and LDA). Worker w owns block w,
// its home block. A round is one full rotation: in sub-round s worker w works on block (w + s) mod P
// with its own data, then passes it to worker w - 1. The coordinator decides each round's Step before
// it starts; what the workers learned is summed and handed back. Every rank is a worker; rank 0 is the
// coordinator too.
//
//   struct P {
//     struct Config  { ... };               // plain data, filled by main() from the flags
//     struct Setup   { ... visit() };       // summed over the workers once, before the first round
//     struct Step    { ... visit() };       // coordinator -> every worker: what a round does
//     struct Partial { ... visit() };       // summed over the workers after each update round
//     struct Stats   { ... visit() };       // summed over the workers after each evaluation
//     struct Block   { ... visit() };       // one block of the travelling model
//     struct Part    { ... visit() };       // a worker's share of the final model
//
//     class Worker {
//      public:
//       Worker(const Config&, const WorkerContext&);      // context.count = P blocks; reads its part
//       Setup setup() const;
//       void start(const Setup& summed);
//       Block make_block() const;                           // its home block, before the first round
//       void update(const Step&, std::uint32_t b, Block&);  // one sub-round of an update round
//       Partial end_update(const Step&, Block& home);       // after the rotation, home block in hand
//       Stats end_evaluation(const Block& home);
//       Part part(const Block& home) const;                 // at the end of the run
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
// Optional members. A program that has half of one fails to compile, with a message that names it.
//   evaluate    void Worker::evaluate(std::uint32_t b, const Block&): an evaluation rotates too, for a
//               model whose every block a worker's data needs. Default: each worker evaluates with its
//               home block alone. With it, bool Worker::rotates_evaluation() const may choose, evaluation
//               by evaluation (the same answer on every worker), whether this one rotates.
//   keep        void Worker::keep(const Block& home): called when a Report says `keep` (the best model
//               so far), so that part() hands over that model: early stopping. Default: the last model.
//   prepare     void Worker::prepare(std::uint32_t b, Block&): one rotation before the first
//               evaluation, for blocks that start from every worker's data (LDA's counts).
//   Shared      struct Shared { visit() } with Shared Worker::share() and void Worker::absorb(const
//               Shared& summed): summed after every update sub-round and handed back before the blocks
//               move on (LDA's topic totals, at most one sub-round stale).
//   checkpoints struct Saved (a worker's share, with global ids) and struct Progress (the coordinator's
//               state), with Saved Worker::save(const Block& home) const, void Worker::restore(const
//               Saved&, Block& home) once per share of the checkpointed run, void
//               Worker::finish_restore(Block& home) after them, Progress Coordinator::save() const and
//               void Coordinator::restore(const Progress&).
//
// Evaluations come when wants_evaluation() says so, and also every --eval_every rounds when that flag is
// given. Resuming, every worker is handed every share of the checkpointed run, one at a time, whatever
// the rank count was, to take its own part from each. docs/programming.md has the details.
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
