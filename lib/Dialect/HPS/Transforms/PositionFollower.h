//===- PositionFollower.h - Positions kept apart along an axis -*- C++ -*-===//
//
// Two analyses ask how ops treat the positions along one axis of a value:
// --hps-bound-extents follows the padding of a data-dependent extent
// (NonZero's capacity), --hps-mark-sample-mixing the samples of the batch
// axis, which the runtime cuts into micro-batches and pads. Either value
// stays correct through an op that computes each position along that axis
// from the same position of its operands, wherever the op puts the axis;
// the rules of which ops do live here, once.
//
//===----------------------------------------------------------------------===//

#ifndef HETERPS_LIB_DIALECT_HPS_TRANSFORMS_POSITIONFOLLOWER_H
#define HETERPS_LIB_DIALECT_HPS_TRANSFORMS_POSITIONFOLLOWER_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace heterps::hps {

/// A value whose positions along `axis` are followed, and what they come
/// from: the count of a data-dependent extent, or the first batched input.
/// Positions of two sources never combine. Where a reshape merged the
/// followed axis with others (an einsum's batch labels, a resize's
/// [P, in, T] view, the [T * N, I] rows of a recurrence's projection), the
/// axis holds `repeat` runs of the followed positions, each owning `group`
/// consecutive positions of it.
struct FollowedAxis {
  int64_t axis;
  mlir::Value source;
  int64_t group = 1;
  int64_t repeat = 1;
  bool whole() const { return group == 1 && repeat == 1; }
  /// The same positions along another axis.
  FollowedAxis at(int64_t other) const {
    FollowedAxis moved = *this;
    moved.axis = other;
    return moved;
  }
  bool operator==(const FollowedAxis &other) const {
    return axis == other.axis && source == other.source &&
           group == other.group && repeat == other.repeat;
  }
};

class PositionFollower {
public:
  /// With `mergesAllowed`, a reshape may merge the followed axis with
  /// others (FollowedAxis::group, repeat); without, it must keep the axis
  /// whole, as a data-dependent extent's padding must stay at its end.
  explicit PositionFollower(bool mergesAllowed)
      : mergesAllowed(mergesAllowed) {}

  /// Called when an op reads a followed value and does not keep its
  /// positions apart: the op, the value's axis, and why ("reduces over
  /// that axis").
  using Reject = llvm::function_ref<void(
      mlir::Operation *, const FollowedAxis &, const llvm::Twine &)>;

  void follow(mlir::Value value, FollowedAxis axis) { followed[value] = axis; }
  std::optional<FollowedAxis> axisOf(mlir::Value value) const {
    auto found = followed.find(value);
    if (found == followed.end())
      return std::nullopt;
    return found->second;
  }
  bool empty() const { return followed.empty(); }

  /// Follows the positions of `op`'s followed operands into its results;
  /// failure after calling `reject` where it mixes them.
  mlir::LogicalResult propagate(mlir::Operation *op, Reject reject);

private:
  mlir::LogicalResult broadcastRule(mlir::Operation *op,
                                    const FollowedAxis &first, Reject reject);
  void setAll(mlir::Operation *op, FollowedAxis axis) {
    for (mlir::Value result : op->getResults())
      followed[result] = axis;
  }

  /// The axis of `reshape`'s result that holds the positions `from`
  /// follows in its operand, and how many each owns there.
  std::optional<FollowedAxis> reshaped(mlir::Operation *reshape,
                                       const FollowedAxis &from) const;

  bool mergesAllowed;
  llvm::DenseMap<mlir::Value, FollowedAxis> followed;
};

} // namespace heterps::hps

#endif // HETERPS_LIB_DIALECT_HPS_TRANSFORMS_POSITIONFOLLOWER_H
