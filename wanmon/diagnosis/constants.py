"""Every threshold of the diagnosis engine, with the reason it has its value.

Rules import these names; no rule hides a number of its own.  Values come from
the physics of docs/diagnosis.md#the-physics and from the measurement set-up (owamp
sessions of 600 packets at 10/s, nuttcp tests of 10 s every 30 min, SNMP polls
every 60 s), not from any particular scenario.
"""

from __future__ import annotations

import math

# --------------------------------------------------------------------------- physics
#: Mathis constant of the HPC tutorials (conservative lower figure).
MATHIS_C_CONSERVATIVE = 0.7
#: Mathis constant of classic Reno with periodic loss, sqrt(3/2) ~ 1.22; matched a real Linux Reno stack.
MATHIS_C_RENO = math.sqrt(1.5)
#: CUBIC reached ~8.5 Mb/s where Reno reached ~4.1-4.7 Mb/s at the same loss: about twice the Reno ceiling.
CUBIC_LOSS_TOLERANCE_FACTOR = 2.0
#: BBR ignores random loss up to a few per cent (BBRv2 reacts to ~2 %); below it loss does not limit BBR.
BBR_LOSS_SENSITIVITY_FRACTION = 0.02
#: 2 * BDP: after one loss the window halves and must still cover one BDP.
RECOMMENDED_WINDOW_BDP_FACTOR = 2.0
#: IPv4 (20) + TCP (20) header bytes without options.
TCP_IP_HEADER_BYTES = 40
#: TCP timestamp option, on by default in Linux: MSS 1448 / 8948 instead of 1460 / 8960.
TCP_TIMESTAMP_OPTION_BYTES = 12
#: Light in fibre (n ~ 1.5) covers about 200 km per millisecond.
FIBRE_KM_PER_MS = 200.0
EARTH_RADIUS_KM = 6371.0
#: MSS assumed when neither tests nor hosts report one: standard 1500-byte Ethernet with timestamps.
DEFAULT_MSS_BYTES = 1448

#: Congestion controls with known problems on long fat paths, and why.
PROBLEM_CONGESTION_CONTROLS = {
    "reno": "classic Reno regains one MSS per RTT after a loss: hours to recover on a long 10 Gb/s path",
    "newreno": "NewReno shares Reno's linear window growth and its hours-long recovery on long paths",
    "bic": "BIC is CUBIC's predecessor; its aggressive growth is unfair to other flows and it was replaced",
    "vegas": "Vegas is delay-based and gives way to loss-based flows, so it starves on shared WAN links",
    "veno": "Veno is a Reno variant for wireless random loss; it keeps Reno's slow recovery",
    "westwood": "Westwood+ tunes for wireless links and keeps Reno-like linear growth on clean WAN paths",
    "lp": "TCP-LP is a low-priority scavenger and backs off as soon as other traffic appears",
}
#: What the advice recommends instead (the Linux default, tolerant of long RTTs).
RECOMMENDED_CONGESTION_CONTROL = "cubic"
#: Loss-insensitive stacks (the Mathis ceiling does not apply to them).
LOSS_INSENSITIVE_CONGESTION_CONTROLS = frozenset({"bbr", "bbr2", "bbr3"})

# --------------------------------------------------------------------------- statistics of probes
#: Rule of three: with zero losses in N packets the 95 % upper bound of the loss fraction is ~3/N.
#: This is the detection limit: 600 owamp packets at 10/s cannot see loss below 5e-3 per session.
ZERO_LOSS_UPPER_BOUND_EVENTS = 3.0
#: An owamp session counts as lossy evidence only with at least this many lost packets: one lost
#: packet in 600 happens on healthy shared paths (transient queue overflow) and is not an incident.
OWAMP_MIN_LOST_PACKETS = 3
#: UDP tests likewise need a few lost packets before one test is called lossy.
UDP_MIN_LOST_PACKETS = 3
#: A probe loss is "new" only if it is this many times the baseline's loss fraction.
PROBE_LOSS_BASELINE_FACTOR = 10.0
#: Probe loss within this distance of a TCP test is taken as the loss that test saw.
LOSS_NEIGHBOURHOOD_S = 3600.0

# --------------------------------------------------------------------------- degradation of a path
#: Relative criterion: a TCP test below this fraction of the path's own reference is "clearly worse".
#: Healthy nuttcp tests on a dedicated path vary by a few per cent; 40 % less is never noise.
DEGRADED_FRACTION = 0.6
#: Statistical criterion for stable paths: at least this relative drop ...
DEGRADED_STAT_MIN_DROP = 0.15
#: ... and below the reference by this many robust standard deviations (1.4826 * MAD) of the baseline.
DEGRADED_STAT_SIGMAS = 4.0
#: Absolute criterion: below this fraction of min(capacity, window limit) *and* with significant loss.
#: A loss is significant when its (CUBIC-scaled) Mathis ceiling is below this fraction as well.
UNDERPERFORMANCE_FRACTION = 0.5
#: Upper quartile of a path's TCP rates: what "TCP on this path reaches" means when comparing with a ceiling.
SELF_REFERENCE_QUANTILE = 0.75
#: Without a baseline each test is judged against the earlier healthy tests of the window; their spread (MAD)
#: is used only from twelve of them on: the MAD of a handful of tests with +-25 % noise is near zero often
#: enough to flag a fifth of all 6-hour windows with the first four tests, and still 8 % with six.
SELF_REFERENCE_MIN_STAT_TESTS = 12
#: Tests needed for a self reference or a baseline median to be meaningful.
MIN_REFERENCE_TESTS = 3
#: Results that pile up against a ceiling (97 % of a 10G line, a host limit) sit within a few per cent of it and
#: the rest spread below: the MAD around the median then measures the pile, not the tail below it (0.36 Gb/s where
#: the results below a 9.7 Gb/s cap spread by ~0.8 Gb/s), and ordinary tail results read as "4 sigma below". A
#: series is piled up when its lower side (median - LOWER_TAIL_QUANTILE quantile) is more than PILEUP_ASYMMETRY
#: times its upper side (the 1 - LOWER_TAIL_QUANTILE quantile - median); symmetric noise (host-limited, +-28 %)
#: is not. Results below the level are then judged with the robust spread of the results below the pile
#: (stats.spread_below). Read only from SELF_REFERENCE_MIN_STAT_TESTS results on.
PILEUP_ASYMMETRY = 3.0
LOWER_TAIL_QUANTILE = 0.1
#: One bad test is not an incident: an episode needs at least this many degraded observations ...
MIN_EPISODE_OBSERVATIONS = 2
#: ... and when every TCP result of it stays above SEVERE_DROP_FRACTION of the reference (a busy test host
#: gives 30-60 %, sometimes twice in a row), this many, unless another measurement kind is bad at the same time.
MIN_MODERATE_EPISODE_OBSERVATIONS = 3
SEVERE_DROP_FRACTION = 0.25
#: A lasting level change is also judged on the median of a day of tests (diurnal load averages out): below
#: the baseline by DEGRADED_STAT_MIN_DROP and by DEGRADED_STAT_SIGMAS standard errors of that median
#: (1.2533 sigma / sqrt(n) for n tests), with at least 6 tests in the day.  The day is longer than the window
#: (6 h): the evidence carries the path's TCP results of the day before the window for it.
LEVEL_SHIFT_WINDOW_S = 86400.0
LEVEL_SHIFT_MIN_TESTS = 6
MEDIAN_STANDARD_ERROR_FACTOR = 1.2533
#: A slight drop (every result still above 75 % of the reference: only the spread criterion sees it) must last
#: half a day: shared links lose 15-25 % of a test's rate for a few hours every afternoon (diurnal load).  The
#: median of a day of results that spans at least this long lies below the level only when more than half of
#: them do: a drop judged on it has lasted, which a daytime dip of a few hours never does.
SLIGHT_DROP_FRACTION = 0.75
SLIGHT_DROP_MIN_SPAN_S = 12 * 3600.0
#: Half a day of results (degradation._lasting_drop) is low when its median lies DEGRADED_STAT_MIN_DROP below the
#: level and this many standard errors of that median, and the median of each of its halves at least
#: LASTING_DROP_HALF_MIN_DROP below (the low level held from the first hours to the last: a dip of a few hours
#: lowers one half only).  The halves make a healthy path's chance small enough for three standard errors where one
#: median alone needs four: on a host-limited path (+-14 % run to run) the median of twelve results lies 15 % low
#: with a chance of ~5e-4, and both halves 7.5 % low besides ~2 %; with four, twelve hourly results of such a path
#: (4 SE = 18 %) would miss a 20 % drop one time in two, and halves of six held to 15 % each one time in three.
LASTING_DROP_SIGMAS = 3.0
LASTING_DROP_HALF_MIN_DROP = DEGRADED_STAT_MIN_DROP / 2
#: The room model (wanmon/diagnosis/room.py) needs two days of 4-hourly tests with their room measured; what the
#: hosts reach is the 90th percentile of the results (the best tests of quiet hours, not one lucky result).
ROOM_MODEL_MIN_TESTS = 12
ROOM_REACH_QUANTILE = 0.9
#: The room model learns from the last week of the baseline period (28 tests of a 6-hourly path, 168 of an hourly
#: one): its figures are medians and quantiles that a week holds, and each test costs a rollup probe per port
#: (three weeks of 10 000 paths: 1.7 M probes, 18 s, in the cycle that reads them cold: scripts/bench room).
ROOM_HISTORY_S = 7 * 86400.0
#: Little history (a new path, site or deployment has hours of it, not weeks): a baseline whose TCP results span
#: less than most of a day (20 h: a day of tests every 4 hours spans 20 h from the first to the last) has not seen
#: a whole diurnal cycle (a night-only history makes every afternoon "degraded"),
#: and one of fewer than twelve results has a spread that is near zero by chance often enough to make ordinary
#: results "4 sigma below" (SELF_REFERENCE_MIN_STAT_TESTS).  Below either, judgements relative to the path's own
#: past that rest on its spread (4 sigma, day medians, lasting slight drops; load correlation and throughput
#: asymmetry with them) abstain; absolute evidence (failures, a collapse below SEVERE_DROP_FRACTION, three clear drops
#: in a row below DEGRADED_FRACTION, loss, physics ceilings, MTU) does not.
HISTORY_MIN_SPAN_S = 20 * 3600.0
HISTORY_MIN_RESULTS = SELF_REFERENCE_MIN_STAT_TESTS
#: History a path's baseline is learned from (wanmon/diagnosis/baseline.py): three weeks, as the WLCG alarm work
#: on perfSONAR data uses, so that a fault of a week is a minority of it and every hour of the week is seen
#: three times.
BASELINE_HISTORY_DAYS = 21
#: A time-of-day (or time-of-week) level needs results from this many different days (weeks) ...
PROFILE_MIN_PERIODS = 3
#: ... and must differ from the overall median by this many standard errors of its own median: diurnal load
#: that really slows a path shows; the chance spread of three noisy results does not.
PROFILE_SIGNIFICANCE = 3.0
#: This many consecutive healthy observations of the same kind end an episode.
EPISODE_BREAK_HEALTHY = 2
#: A gap longer than this many measurement intervals (of that kind) ends an episode.
EPISODE_MAX_GAP_FACTOR = 2.5
#: Gap used when the cadence of a measurement kind is unknown.
EPISODE_DEFAULT_MAX_GAP_S = 3600.0
#: Episodes of different measurement kinds closer than this are one degradation.
EPISODE_MERGE_SLACK_S = 1800.0

# --------------------------------------------------------------------------- WINDOW_LIMITED
#: Throughput within [0.7, 1.15] of W*8/RTT is "at the window limit" (the upper margin covers RTT
#: measured under load and the Linux buffer accounting that grants a little more than requested).
WINDOW_MATCH_MIN_RATIO = 0.7
WINDOW_MATCH_MAX_RATIO = 1.15
#: With autotuning (no explicit window) Linux advertises only part of tcp_rmem's maximum as window
#: (tcp_adv_win_scale: 1/2 or 3/4 of the buffer), so the stream sits at 0.5-0.75 x max*8/RTT.
WINDOW_MATCH_MIN_RATIO_AUTOTUNED = 0.35
#: Autotuned matches must be steady: MAD below 5 % of the median.  A window-limited stream repeats itself (same
#: window, same RTT: a few per cent); a host-limited one spread uniformly over 28 % of its level has a MAD of
#: ~8 % of its median, more with busy hosts.
WINDOW_AUTOTUNED_MAX_SPREAD = 0.05
#: The window is the binding limit only when W*8/RTT is clearly below the capacity.
WINDOW_BINDING_MAX_FRACTION = 0.8
#: Tests needed (and the share of the TCP tests) for a WINDOW_LIMITED finding.
WINDOW_MIN_TESTS = 2
WINDOW_MIN_SHARE = 0.5

# --------------------------------------------------------------------------- LOSS_LIMITED
#: The loss is the binding limit when its Mathis ceiling is below this fraction of min(C, R_w).
LOSS_BINDING_MAX_FRACTION = 0.8
#: The flow must run clearly below min(C, R_w): above this fraction it is not limited at all.
LOSS_LIMITED_MAX_FRACTION_OF_EXPECTED = 0.7
#: "Close to the Mathis rate": measured <= 1.5 x the stack's ceiling and >= 0.25 x the conservative figure.
LOSS_MATCH_MAX_RATIO = 1.5
LOSS_MATCH_MIN_RATIO = 0.25
#: Target used in "loss needed for ..." advice: 90 % of the path's capacity.
TARGET_FRACTION_OF_CAPACITY = 0.9
#: A loss rate needs at least this many lost packets (or retransmitted segments) behind it: with one or two
#: events the 95 % interval of the rate spans two orders of magnitude (rule of three), not a figure to blame.
LOSS_MIN_EVENTS = 3
#: A port carrying 90 % of its speed or more with a test in it has a standing queue (an M/D/1 queue at load 0.9
#: holds ~4.5 packets on average and far more in bursts): a loss-based sender's window bursts overflow it, and
#: its retransmits count its own congestion losses, not a loss of the path.
LOSS_SELF_INDUCED_UTILISATION = 0.9

# --------------------------------------------------------------------------- ASYMMETRIC_PATH
#: One direction below 30 % of the other's efficiency (throughput / expected) "differs strongly".
ASYMMETRY_MAX_RATIO = 0.3
#: Below 10 % it is critical (the CERN<->FZK case ran at ~3 %).
ASYMMETRY_CRITICAL_RATIO = 0.1
#: Probe loss that is ten times the other direction's (or its detection limit) is asymmetric loss.
ASYMMETRY_LOSS_FACTOR = 10.0

# --------------------------------------------------------------------------- TCP_ONLY_DEGRADATION
#: TCP below half of min(flow capacity, window limit, probe-loss ceiling) is "far below prediction".
TCP_ONLY_MAX_FRACTION = 0.5
#: A UDP test is "at a comparable rate" when it carried at least twice what the slow TCP tests reached.
UDP_COMPARABLE_FACTOR = 2.0
#: Degraded TCP tests needed.
TCP_ONLY_MIN_TESTS = 2

# --------------------------------------------------------------------------- TRUNK_IMBALANCE
#: Member utilisation only matters once the busiest member carries at least 20 % of its speed.
TRUNK_MIN_BUSY_UTILISATION = 0.2
#: Least busy member below half of the busiest: hashing does not share the load.
TRUNK_MAX_MEMBER_RATIO = 0.5
#: A hashing fault starts at some moment: member loads are also compared per 30-min bin (the test cadence),
#: and an imbalance held over consecutive bins for at least an hour counts even when the window average,
#: which includes the balanced time before the fault, does not show it.
TRUNK_BIN_S = 1800.0
TRUNK_MIN_IMBALANCED_S = 3600.0
#: Members are compared over the same intervals only (the time every compared member was in service and polled):
#: at least 10 min of it (two 5-minute polls), and a member in service for less than half the time of the most
#: polled one at its end is left out of the comparison rather than shrinking it.
TRUNK_MIN_COMMON_S = 600.0
TRUNK_MIN_COVERAGE_SHARE = 0.5
#: A member whose agent reports no oper status is out of the bundle when it carries nothing (below 1e-4 of its
#: speed both ways: LACP's own frames are a few hundred bit/s) in INTERFACE_DOWN_MIN_SAMPLES consecutive polls
#: while a sibling at its end carries at least 1 % of its speed (a quiet bundle at night says nothing).
TRUNK_IDLE_MEMBER_UTILISATION = 1e-4
TRUNK_IDLE_SIBLING_UTILISATION = 0.01
#: Odd/even groups: slower group median below half the faster one, each with at least two tests.
BIMODAL_MAX_RATIO = 0.5
BIMODAL_MIN_TESTS_PER_GROUP = 2

# --------------------------------------------------------------------------- correlation
#: Degradations within 30 min of each other overlap (tests run every 30 min).
CORRELATION_SLACK_S = 1800.0
#: How much a healthy path crossing an element exonerates it:
#: same direction (shares an adjacent directed hop with a degraded path): fully;
HEALTHY_WEIGHT_SAME_DIRECTION = 1.0
#: through other ports of the element: partly (a line card or port may be the culprit);
HEALTHY_WEIGHT_OTHER_PORTS = 0.5
#: only in the opposite direction: little (one fibre of a pair can be dirty, the other clean).
HEALTHY_WEIGHT_REVERSE = 0.25
#: An element whose own counters show a fault (INTERFACE_ERRORS, LINK_CONGESTION) counts as one more degraded
#: path: direct evidence outweighs a shared position (an ECMP sibling seen only in traceroutes, a border port
#: that healthy paths cross only the other way).
CORROBORATION_BONUS = 1.0
#: Another path's load "rose" by at least 100 Mb/s (case 5: "a few 100 Mbit/s") ...
LOAD_RISE_MIN_BPS = 1.0e8
#: ... and by at least 2 % of the link speed.
LOAD_RISE_MIN_FRACTION = 0.02
#: The rise must start within 30 min of the degradation's onset.
LOAD_ONSET_TOLERANCE_S = 1800.0
#: Look this far back before an onset for the "before" load.
LOAD_LOOKBACK_S = 7200.0
#: A load rise starts with a drop when at least half of it happens between the path's last result at its
#: level and its first lower one: a morning ramp climbs for hours and makes only a slice of its rise between
#: two hourly tests, a flow that starts makes all of it there.
LOAD_STEP_FRACTION = 0.5
#: A test that got at least 80 % of the capacity the other traffic left it at the time of the test (the polls
#: covering its seconds) was held by the load: the link was full, the load predicts the result (a busy shared
#: link, what the tests on it get every day at the peak), and equipment at its limits is no explanation.
LOAD_SPARE_MATCH_FRACTION = 0.8
#: A 10-second test inside a poll interval without a known length (no previous poll): assumed this long.
LOAD_TEST_DEFAULT_DURATION_S = 10.0

# --------------------------------------------------------------------------- interfaces
#: CRC / input and output errors above 1e-6 of the packets: a clean optical link counts (nearly) none, and at
#: 1e-6 one TCP stream on a 150 ms path with jumbo frames is already capped near 1 Gb/s (Mathis).
INTERFACE_ERROR_FRACTION = 1.0e-6
#: Discards (input and output queue drops) are counted separately: a few input discards a minute on a busy
#: 100G port (1e-8 of its packets: unknown protocols, policers) are normal; output discards are the micro-burst
#: drops of a port in front of a faster one (case study 5 at 45 % load).  Above 1e-6 of the packets they cost
#: long-path TCP as much as CRC errors do.
INTERFACE_DISCARD_FRACTION = 1.0e-6
#: When a poll has no packet counters, packets are estimated from the bit rate with 1500-byte frames.
INTERFACE_ASSUMED_FRAME_BYTES = 1500
#: Without packets nor bits (an idle or unknown port) an absolute floor: more than one event per 60 s poll.
INTERFACE_ERRORS_MIN_PER_S = 0.01
#: Persistent: in this many consecutive valid polls of the same interface (a clean poll ends a run); a dirty
#: connector keeps producing errors, a one-off burst (a reseated cable, a line-card event) does not.
INTERFACE_ERRORS_MIN_INTERVALS = 3
#: Utilisation above 90 % of the speed is where queues and drops form.
CONGESTION_UTILISATION = 0.9
#: Sustained: at least three valid polling intervals (one interval can be an artefact).
CONGESTION_MIN_INTERVALS = 3
#: A rate above 105 % of the speed is physically impossible: a counter artefact, never congestion.
IMPLAUSIBLE_UTILISATION = 1.05
#: Interface down on a path: two consecutive polls (or the latest poll).
INTERFACE_DOWN_MIN_SAMPLES = 2
#: The IF-MIB oper statuses that mean the port carries nothing ('testing', 'dormant' and 'unknown' do not say so).
DOWN_STATUSES = frozenset({"down", "lowerlayerdown", "notpresent"})

# --------------------------------------------------------------------------- PATH_DOWN
#: Consecutive failed tests / sessions with 100 % loss of one kind needed; a single one needs another kind
#: (or a port of the path down) to confirm it.  A test failing once between successes is a busy server.
PATH_DOWN_MIN_OBSERVATIONS = 2
#: Other measurement kinds within 10 min of a run of failures confirm it (they failed too) or contradict it
#: (they got packets through): owamp runs every 1-5 min, so a failed 30-min test always has sessions this near.
PATH_DOWN_CROSS_CHECK_S = 600.0

# --------------------------------------------------------------------------- MEASUREMENT_GAP
#: A kind of measurement "stopped arriving" when none came for 3 of its intervals (one late or skipped run is
#: normal) and at least an hour ...
GAP_MISSING_INTERVALS = 3.0
GAP_MIN_SILENCE_S = 3600.0
#: ... after at least 6 regular results (a kind run only for a while in a scenario has no cadence to miss).
GAP_MIN_HISTORY = 6

# --------------------------------------------------------------------------- PERIODIC_LOSS
#: At least four loss events (three intervals) to call a period.
PERIODIC_MIN_EVENTS = 4
#: An interval matches the period within 15 % (or half a sampling interval, the time resolution).
PERIODIC_PERIOD_TOLERANCE = 0.15
#: At least 80 % of the intervals must be multiples of the period, 60 % exactly one period.
PERIODIC_MIN_REGULAR_SHARE = 0.8
PERIODIC_MIN_SINGLE_SHARE = 0.6
#: Random loss fits a period by chance too: memoryless (Poisson) loss at the same rate, seen on the same sampling
#: grid, must fit multiples of the period as well as the events do with a probability of at most 1e-4.  Without
#: it a period of ~1.5 sampling intervals, whose tolerance of half an interval admits every gap on the grid, is
#: "found" in plain random loss (about 7 % of 6-hour runs with 5-min sessions); 4-5 events in 6 hours prove
#: nothing either.  The gaps that set the period (the median) are not counted as evidence for it.  The bound is
#: for a mesh, not one path: every path is judged every cycle, and at 1 % a 10 000-path mesh of one-minute
#: sessions with stray single-packet losses had 12-16 healthy paths "periodic" in every 6-hour window.  A real
#: period fits far more tightly than chance (a clean hourly pattern: ~1e-6 with six events).
PERIODIC_MAX_CHANCE_PROBABILITY = 1e-4
#: If more than 80 % of the sessions lose packets the loss is continuous, not periodic.
PERIODIC_MAX_EVENT_SHARE = 0.8
#: The period must exceed 1.5 sampling intervals, otherwise it is just the sampling cadence.
PERIODIC_MIN_PERIOD_SAMPLES = 1.5
#: A period matches an agent poll interval within 10 %.
POLL_MATCH_TOLERANCE = 0.1
#: Loss times closer than this belong to one loss event (netstat drops packets "in the following second").
LOSS_EVENT_MERGE_S = 2.0

# --------------------------------------------------------------------------- delay
#: Two minimum-delay levels must be at least 0.3 ms apart (60 km of fibre) ...
DELAY_LEVEL_MIN_STEP_MS = 0.3
#: ... and the gap at least three times the spread inside a level.
DELAY_LEVEL_SPREAD_FACTOR = 3.0
#: A level needs at least two sessions (a single odd minimum is an outlier).
DELAY_LEVEL_MIN_SAMPLES = 2

# --------------------------------------------------------------------------- CLOCK_UNSYNC
#: Forward + reverse minimum one-way delay must match the RTT within max(1 ms, 10 %).
CLOCK_RTT_TOLERANCE_MS = 1.0
CLOCK_RTT_TOLERANCE_FRACTION = 0.1
#: Reported clock error is "too large" above max(1 ms, min(5 ms, half the one-way delay)):
#: beyond that it hides the 0.3 ms steps the delay rules look for.
CLOCK_ERROR_FLOOR_MS = 1.0
CLOCK_ERROR_MAX_MS = 5.0
CLOCK_ERROR_DELAY_FRACTION = 0.5
#: Forward and reverse sessions are paired when they are at most 10 min apart.
CLOCK_PAIR_MAX_SKEW_S = 600.0
#: Large reported clock error needs two sessions; a negative delay is impossible, one suffices.
CLOCK_MIN_ERROR_SESSIONS = 2

# --------------------------------------------------------------------------- REORDERING
#: Reordering above 0.1 % of the owamp packets, seen in at least two sessions.
REORDERING_MIN_FRACTION = 1.0e-3
REORDERING_MIN_SESSIONS = 2

# --------------------------------------------------------------------------- MTU_MISMATCH
#: Path MTU (or MSS) below 90 % of what the endpoints use: jumbo vs standard frames, not 9000 vs 9216.
MTU_MISMATCH_RATIO = 0.9

# --------------------------------------------------------------------------- HOST_TCP_TUNING
#: Buffer maxima below one BDP of the site's longest path cannot fill it.
HOST_BUFFER_MIN_BDP_FACTOR = 1.0
#: Recommended maxima are rounded up to whole MiB.
HOST_BUFFER_ROUND_BYTES = 1 << 20
#: Linux caps a socket buffer (and so net.core.*mem_max, tcp_*mem) at INT_MAX = 2^31-1 bytes: on 100G x 300 ms
#: no setting reaches the BDP, and the advice is parallel streams, not a sysctl.
LINUX_MAX_SOCKET_BUFFER_BYTES = (1 << 31) - 1
#: A Reno-like congestion control is a problem when one loss costs more than 10 min of reduced rate on the
#: site's longest path (C*RTT^2/(2*MSS*8)): 10G at 120 ms needs ~1.7 h, 10G across Europe at 20 ms ~3 min.
HOST_CC_MAX_RESPONSIVENESS_S = 600.0
#: Defaults written into the tcp_rmem / tcp_wmem advice when the host did not report its own.
DEFAULT_TCP_RMEM = (4096, 87380)
DEFAULT_TCP_WMEM = (4096, 65536)

# --------------------------------------------------------------------------- maintenance
#: Impacts that explain a degradation (the maintenance app's vocabulary; at-risk work may interrupt service).
EXPLAINING_IMPACTS = frozenset(
    {"outage", "degraded", "at-risk", "at_risk", "down", "interruption", "service-affecting", "service_affecting"}
)
#: Impacts that do not: traffic should not notice reduced redundancy or no-impact work.
#: Any other (unknown) impact is treated as an outage, as the maintenance app does.
NON_EXPLAINING_IMPACTS = frozenset({"reduced-redundancy", "reduced_redundancy", "no-impact", "no_impact", "none"})
#: A degradation may show up to 15 min before the window (clock skew between carrier and us) ...
MAINTENANCE_START_SLACK_S = 900.0
#: ... and last up to 30 min after it (routing convergence, the next test run).
MAINTENANCE_END_GRACE_S = 1800.0

# --------------------------------------------------------------------------- UNEXPLAINED_DEGRADATION
#: A finding predicting a rate explains a degradation only if the degraded throughput reaches at least half of
#: it: a 255 Mb/s window limit does not explain 60 Mb/s (something else holds the flow four times lower).
EXPLANATION_MIN_FRACTION = 0.5
#: UNEXPLAINED_DEGRADATION waits until a degradation has lasted this long: the rules that explain one need several
#: observations of it first (PERIODIC_LOSS a run of regular events, LOSS_LIMITED a loss rate from enough lost
#: packets), and production evaluates every minute: saying "no rule explains it" in the first minutes of a
#: degradation that a rule explains half an hour later sends people to the wrong place.
UNEXPLAINED_MIN_EPISODE_S = 1800
#: Median one-way delay worse than baseline by more than max(2 ms, 25 % of the baseline minimum).
DELAY_DEGRADED_MIN_MS = 2.0
DELAY_DEGRADED_FRACTION = 0.25

# --------------------------------------------------------------------------- confidence and impact (engine)
#: Critical means traffic is hurt now: a critical path finding whose path has since given this many healthy
#: results in a row (the episode rule's own end of a degradation) is a warning: it hurt, it no longer does.
RECOVERED_HEALTHY_RESULTS = EPISODE_BREAK_HEALTHY
#: Confidence of a path finding: high with bad results of two measurement kinds, or this many bad results;
#: medium with MIN_MODERATE_EPISODE_OBSERVATIONS; low below (a rule that could only see a little).
CONFIDENCE_HIGH_OBSERVATIONS = 6

# --------------------------------------------------------------------------- stored findings (hysteresis)
#: A stored finding is resolved only once this many consecutive evaluations have not reported it ...
FINDING_CLOSE_ABSENT_EVALUATIONS = 3
#: ... and at least this long after the last evaluation that did: results arrive up to 10 min after their session
#: (an owamp session of 60 s, a test uploaded by the agent's next batch), so a fault can vanish from one
#: evaluation only because its latest evidence is still on its way. Opening is damped by the rules (episodes).
FINDING_CLOSE_ABSENT_S = 600.0
#: A finding that comes back within this time after being resolved is the same problem: the resolved finding is
#: reopened (same id, same incident, no new first notice) instead of a new one. Two throughput tests at the usual
#: 30-minute cadence: a fault that the next test or the one after shows again is not a new fault.
FINDING_REOPEN_WITHIN_S = 3600.0
