//! The order in which a campaign starts its attempts.
//!
//! A campaign runs its attempts on `concurrency` slots: a slot that frees takes the next
//! attempt of one start order. Three orders:
//!
//! - [`StartOrder::Plan`] (the default): the plan's order, repetition-major, so a partial
//!   campaign already covers every task.
//! - [`StartOrder::LongestFirst`]: longest expected first (classic LPT list scheduling), so
//!   the last attempts to start are short ones and the tail is short. Each attempt's length
//!   is estimated in model turns from its task ([`expected_turns`]: golden calls, the closing
//!   reply, the rubric questions; a real campaign has these too).
//! - [`StartOrder::Packed`]: longest expected first, packed so the slots end together. The
//!   attempts are packed into `concurrency` slots of about equal total turns (best fit,
//!   longest first, then moves and swaps that bring every slot under the horizon
//!   `ceil(total / slots)`), each slot's attempts longest first, and the start order is the
//!   attempts sorted by their planned start (in turns), then the fuller slot's first, then
//!   longest first. Slots stay dynamic (whichever frees takes the next attempt), so when
//!   turns take equal time the run ends at the packed horizon, and when they do not it
//!   behaves about as longest-first list scheduling.
//!
//! With `LongestFirst` and `Packed` a partial campaign covers the long tasks first, not every
//! task. Records are per attempt and written in completion order with any order, so the order
//! changes no record and no verdict, only when each attempt starts.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use tb_core::{Check, Task};

/// How a campaign orders the start of its attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartOrder {
    /// The plan's order (repetition-major).
    #[default]
    Plan,
    /// Longest expected first (ties in plan order).
    LongestFirst,
    /// Longest expected first, packed into the slots (see the module docs).
    Packed,
}

impl StartOrder {
    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            StartOrder::Plan => "plan",
            StartOrder::LongestFirst => "longest-first",
            StartOrder::Packed => "packed",
        }
    }
}

impl std::str::FromStr for StartOrder {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "plan" => Ok(StartOrder::Plan),
            "longest-first" => Ok(StartOrder::LongestFirst),
            "packed" => Ok(StartOrder::Packed),
            other => Err(format!(
                "start order `{other}`: expected `plan`, `longest-first` or `packed`"
            )),
        }
    }
}

/// The model turns an attempt at `task` is expected to take: one agent reply per golden
/// call (every server's), one closing reply, and one judge question per yes/no rubric when
/// the task checks them. An estimate for ordering, never used for a verdict.
pub fn expected_turns(task: &Task) -> u64 {
    let mut n = 1u64;
    let rubrics = task.checks.contains(&Check::ValidateRubricsYesno);
    for (server, config) in &task.world_state {
        n += tb_core::task::golden_calls_of(config).len() as u64;
        if rubrics {
            n += task.rubrics_yesno(server).len() as u64;
        }
    }
    n
}

/// The indices `0..weights.len()` (job `i` expected to take `weights[i]`) in the order to
/// start them on `slots` slots.
pub fn start_order(weights: &[u64], slots: usize, order: StartOrder) -> Vec<usize> {
    match order {
        StartOrder::Plan => (0..weights.len()).collect(),
        StartOrder::LongestFirst => {
            let mut o: Vec<usize> = (0..weights.len()).collect();
            o.sort_by_key(|&i| Reverse(weights[i]));
            o
        }
        StartOrder::Packed => packed_order(weights, slots),
    }
}

/// The packed start order: the planned start of every job in [`pack`]'s slots (each slot's
/// jobs longest first), sorted by (start, fuller slot first, longest first, index). Among
/// jobs planned to start together, those of the fuller slots go to the slots that free
/// first, so a slot that started late in the first wave tends to run a lighter plan.
fn packed_order(weights: &[u64], slots: usize) -> Vec<usize> {
    let mut starts: Vec<(u64, Reverse<u64>, Reverse<u64>, usize)> =
        Vec::with_capacity(weights.len());
    for slot in pack(weights, slots) {
        let total: u64 = slot.iter().map(|&i| weights[i]).sum();
        let mut t = 0u64;
        for i in slot {
            starts.push((t, Reverse(total), Reverse(weights[i]), i));
            t = t.saturating_add(weights[i]);
        }
    }
    starts.sort_unstable();
    starts.into_iter().map(|(_, _, _, i)| i).collect()
}

/// Packs jobs (`weights[i]` for job `i`) into at most `slots` slots of about equal total:
/// every job in exactly one slot, each slot's jobs longest first (ties by index).
///
/// The horizon is `H = max(ceil(total / k), longest)` for `k = min(slots, jobs)` slots. The
/// `k` longest jobs go one per slot; the rest, longest first, each into the slot with the
/// least room that still holds it (best fit). A job no slot holds goes into the slot with
/// the most room, and such a slot over `H` is then brought back under by moving one of its
/// jobs to a slot with room or swapping one with a shorter job of such a slot. A slot this
/// cannot repair stays over `H`, by less than its longest job.
pub fn pack(weights: &[u64], slots: usize) -> Vec<Vec<usize>> {
    let n = weights.len();
    if n == 0 {
        return Vec::new();
    }
    let k = slots.clamp(1, n);
    let total: u64 = weights.iter().sum();
    let longest = weights.iter().copied().max().unwrap_or(0);
    let h = total.div_ceil(k as u64).max(longest);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by_key(|&i| (Reverse(weights[i]), i));

    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); k];
    let mut load = vec![0u64; k];
    for (b, &i) in order[..k].iter().enumerate() {
        bins[b].push(i);
        load[b] = weights[i];
    }
    // Slots by room left (room -> slots with that room); a slot over `H` is in none.
    let mut rooms: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for (b, &l) in load.iter().enumerate() {
        rooms.entry(h - l).or_default().push(b);
    }
    let take = |rooms: &mut BTreeMap<u64, Vec<usize>>, room: u64| -> Option<usize> {
        let v = rooms.get_mut(&room)?;
        let b = v.pop();
        if v.is_empty() {
            rooms.remove(&room);
        }
        b
    };
    let mut overflow = Vec::new();
    for &i in &order[k..] {
        let w = weights[i];
        let Some(room) = rooms.range(w..).next().map(|(r, _)| *r) else {
            overflow.push(i);
            continue;
        };
        if let Some(b) = take(&mut rooms, room) {
            bins[b].push(i);
            load[b] += w;
            rooms.entry(room - w).or_default().push(b);
        }
    }
    let mut over = Vec::new();
    for i in overflow {
        // Some slot is under `H` (what is placed so far is less than the total, at most
        // k * H), so `rooms` is not empty; the fallback keeps every job placed regardless.
        let b = match rooms.keys().next_back().copied() {
            Some(room) => take(&mut rooms, room).unwrap_or(0),
            None => 0,
        };
        bins[b].push(i);
        load[b] += weights[i];
        if load[b] <= h {
            rooms.entry(h - load[b]).or_default().push(b);
        } else {
            over.push(b);
        }
    }
    over.sort_unstable();
    over.dedup();
    for b in over {
        repair(weights, &mut bins, &mut load, h, b);
    }
    for bin in &mut bins {
        bin.sort_unstable_by_key(|&i| (Reverse(weights[i]), i));
    }
    bins
}

/// Brings slot `b` (over `h`) back to at most `h` with one move (a job of `b` into a slot
/// with room for it) or one swap (a job of `b` for a shorter job of a slot with room for the
/// difference), if there is one; otherwise leaves it as it is.
fn repair(weights: &[u64], bins: &mut [Vec<usize>], load: &mut [u64], h: u64, b: usize) {
    if load[b] <= h {
        return;
    }
    let excess = load[b] - h;
    for d in 0..bins.len() {
        if d == b || load[d] >= h {
            continue;
        }
        let room = h - load[d];
        for ai in 0..bins[b].len() {
            let a = weights[bins[b][ai]];
            if (excess..=room).contains(&a) {
                let job = bins[b].swap_remove(ai);
                bins[d].push(job);
                load[b] -= a;
                load[d] += a;
                return;
            }
            for ci in 0..bins[d].len() {
                let c = weights[bins[d][ci]];
                if a > c && (excess..=room).contains(&(a - c)) {
                    let (ja, jc) = (bins[b][ai], bins[d][ci]);
                    bins[b][ai] = jc;
                    bins[d][ci] = ja;
                    load[b] -= a - c;
                    load[d] += a - c;
                    return;
                }
            }
        }
    }
}

/// The largest total of a slot when `order` is started on `slots` slots and every job takes
/// exactly its weight (list scheduling: a slot that frees takes the next job): the wall
/// time, in turns, that order needs when every turn takes the same time.
pub fn list_makespan(weights: &[u64], order: &[usize], slots: usize) -> u64 {
    let mut free: std::collections::BinaryHeap<Reverse<u64>> =
        std::iter::repeat_n(Reverse(0u64), slots.max(1)).collect();
    let mut end = 0;
    for &i in order {
        let Reverse(t) = free.pop().unwrap_or(Reverse(0));
        let e = t.saturating_add(weights[i]);
        end = end.max(e);
        free.push(Reverse(e));
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The turns of the 507 benchmark tasks (golden calls + 1 + rubrics), by count, 20
    /// repetitions: the shape of the benchmark's campaign.
    fn benchmark_like() -> Vec<u64> {
        let counts: [(u64, usize); 17] = [
            (2, 6),
            (3, 42),
            (4, 83),
            (5, 58),
            (6, 39),
            (7, 48),
            (8, 44),
            (9, 56),
            (10, 56),
            (11, 30),
            (12, 27),
            (13, 10),
            (14, 4),
            (15, 1),
            (16, 1),
            (18, 1),
            (20, 1),
        ];
        let task: Vec<u64> = counts
            .iter()
            .flat_map(|&(w, c)| std::iter::repeat_n(w, c))
            .collect();
        (0..20).flat_map(|_| task.iter().copied()).collect()
    }

    fn check_partition(weights: &[u64], bins: &[Vec<usize>]) {
        let mut seen = vec![0u32; weights.len()];
        for b in bins {
            for &i in b {
                seen[i] += 1;
            }
            assert!(
                b.windows(2).all(|p| weights[p[0]] >= weights[p[1]]),
                "a slot's jobs are longest first: {b:?}"
            );
        }
        assert!(
            seen.iter().all(|&s| s == 1),
            "every job in exactly one slot"
        );
    }

    #[test]
    fn the_benchmark_campaign_packs_to_its_horizon() {
        let w = benchmark_like();
        let total: u64 = w.iter().sum();
        assert_eq!(total, 73_100);
        let bins = pack(&w, 2000);
        check_partition(&w, &bins);
        let max = bins
            .iter()
            .map(|b| b.iter().map(|&i| w[i]).sum::<u64>())
            .max()
            .unwrap();
        assert_eq!(max, 37, "ceil(73,100 / 2,000)");
        // Started in the packed order with turns of equal length, the run ends at the
        // horizon; longest first alone ends two turns later, the plan's order much later.
        let packed = start_order(&w, 2000, StartOrder::Packed);
        assert_eq!(list_makespan(&w, &packed, 2000), 37);
        let lpt = start_order(&w, 2000, StartOrder::LongestFirst);
        assert!(lpt.windows(2).all(|p| w[p[0]] >= w[p[1]]));
        assert_eq!(list_makespan(&w, &lpt, 2000), 39);
        let plan = start_order(&w, 2000, StartOrder::Plan);
        assert!(list_makespan(&w, &plan, 2000) > 45);
        for slots in [1, 7, 64, 500, 1000, 3000] {
            let o = start_order(&w, slots, StartOrder::Packed);
            assert_eq!(
                list_makespan(&w, &o, slots),
                total.div_ceil(slots as u64).max(20),
                "{slots} slots"
            );
        }
    }

    #[test]
    fn orders_and_names() {
        assert_eq!(start_order(&[3, 1, 2], 2, StartOrder::Plan), vec![0, 1, 2]);
        assert_eq!(
            start_order(&[3, 1, 3, 2], 2, StartOrder::LongestFirst),
            vec![0, 2, 3, 1]
        );
        assert!(start_order(&[], 4, StartOrder::Packed).is_empty());
        assert!(pack(&[], 4).is_empty());
        // The first wave is the longest jobs, one per slot, the fuller slot's first.
        let o = start_order(&[1, 5, 2, 4, 3], 2, StartOrder::Packed);
        assert_eq!(&o[..2], &[1, 3]);
        for o in [
            StartOrder::Plan,
            StartOrder::LongestFirst,
            StartOrder::Packed,
        ] {
            assert_eq!(o.as_str().parse::<StartOrder>(), Ok(o));
        }
        assert!("lpt".parse::<StartOrder>().unwrap_err().contains("`lpt`"));
    }

    proptest! {
        #[test]
        fn packing_keeps_every_job_once_and_bounds_the_slots(
            weights in proptest::collection::vec(0u64..40, 0..300),
            slots in 1usize..60,
        ) {
            let bins = pack(&weights, slots);
            check_partition(&weights, &bins);
            prop_assert!(bins.len() <= slots);
            let total: u64 = weights.iter().sum();
            let longest = weights.iter().copied().max().unwrap_or(0);
            if !weights.is_empty() {
                let k = slots.min(weights.len()) as u64;
                let h = total.div_ceil(k).max(longest);
                for b in &bins {
                    let l: u64 = b.iter().map(|&i| weights[i]).sum();
                    prop_assert!(l < h + longest.max(1), "slot {} vs horizon {}", l, h);
                }
            }
            // Every start order is a permutation of the jobs (each started exactly once),
            // within list scheduling's bound (total / slots + longest).
            for order in [StartOrder::Plan, StartOrder::LongestFirst, StartOrder::Packed] {
                let o = start_order(&weights, slots, order);
                let mut sorted = o.clone();
                sorted.sort_unstable();
                prop_assert_eq!(sorted, (0..weights.len()).collect::<Vec<_>>());
                prop_assert!(
                    list_makespan(&weights, &o, slots) <= total.div_ceil(slots as u64) + longest
                );
            }
        }
    }
}
