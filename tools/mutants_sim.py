"""Hand-made mutants of the simulation's run rules, for ``tools/mutants.py --mutants tools/mutants_sim.py``.

Each models a realistic single mistake in one rule (a ``<`` for a ``<=``, a
dropped sort key, a forgotten branch). See ``tools/mutants.py`` for the format
and how they run.
"""

RULES = ["tests/simulation/test_run_rules_pinned.py"]
SIM = [*RULES, "tests/simulation/test_engine.py", "tests/simulation/test_budget_periods.py",
       "tests/presets/test_presets.py"]
# The rules issue 29 added, and the presets built on them.
ISSUE29 = [*SIM, "tests/simulation/test_created_and_counted_runs.py", "tests/presets/test_airflow.py",
           "tests/presets/test_prefect.py"]
ORACLES = [*SIM, "tests/presets/test_kubernetes.py", "tests/presets/test_apscheduler.py"]
R, C, E, K, B = ("calsim/simulation/run_rules.py", "calsim/simulation/columns.py", "calsim/simulation/event_loop.py",
                 "calsim/simulation/worker_kernel.py", "calsim/simulation/budget_periods.py")
ORD = "calsim/simulation/order.py"  # which rows need order (split from columns.py)
# The ordered loop is one compiled kernel (worker_kernel.py); its scheduler-level path is checked against the
# Python loop it replaced (changed in lockstep where ADR 0002 says).
LOOP = ["tests/simulation/test_worker_kernel.py", "tests/simulation/test_event_loop.py", *SIM]
# A rule of the table (rules.py) is compiled into both loops: its tests, and the worker loop's.
RULED = ["tests/simulation/test_run_rules.py", *SIM, "tests/simulation/test_worker_loop_composed.py"]
W = K
WORKERS = ["tests/simulation/test_worker_loop_composed.py", "tests/simulation/test_worker_loop.py"]


def M(id, file, old, new, why, tests=SIM, equivalent=None):
    d = {"id": id, "file": file, "old": old, "new": new, "why": why, "tests": tests}
    if equivalent:
        d["equivalent"] = equivalent
    return d


MUTANTS = [
    # --- rules.py: up, wake ---------------------------------------------------------------------
    M("sim-up-scalar-open", R, "        if out_lo[k] <= t < out_hi[k]:\n            t = out_hi[k]",
      "        if out_lo[k] < t < out_hi[k]:\n            t = out_hi[k]",
      "an instant at an outage's start counts as up (the compiled loops' up_one)", RULED),
    M("sim-up-vector-closed", R, "np.copyto(t, end, where=(t >= start) & (t < end))",
      "np.copyto(t, end, where=(t >= start) & (t <= end))", "the come-back instant counts as down",
      equivalent="an instant equal to the end is moved to the end: itself"),
    M("sim-wake-side", R, "j = np.searchsorted(ends, e, side=\"left\")  # the first outage ending at or after eligible",
      "j = np.searchsorted(ends, e, side=\"right\")  # the first outage ending at or after eligible",
      "an outage ending exactly when a run is due is not its come-back"),
    M("sim-wake-no-chain", R, "back = np.where(has, up(back, outages), BIG)  # a come-back",
      "back = np.where(has, back, BIG)  # a come-back", "a come-back inside the next (adjacent) outage is a wake-up"),
    M("sim-wake-no-early-comeback", R, "looks = np.minimum(np.where(c_up != c, BIG, c), back)",
      "looks = np.where(c_up != c, back, c)", "a come-back before the next tick is not a wake-up"),
    M("sim-wake-norecovery-tick-at-end", R, "moved = (t_up != ticks) | np.isin(ticks, ends)", "moved = t_up != ticks",
      "without a look at recovery, a tick exactly at the come-back still runs"),
    M("sim-wake-norecovery-ceil", R, "ticks = np.where(moved, (t_up // tick + 1) * tick, ticks)",
      "ticks = np.where(moved, -((-t_up) // tick) * tick, ticks)",
      "without a look at recovery, the first tick at (not after) the come-back"),
    M("sim-wake-suspend-ignored", R, "        ticks = np.minimum(ticks, s_back)", "        ticks = ticks",
      "a suspended cron process does not wake on resume"),
    # --- rules.py: edges, backlogs ----------------------------------------------------------------
    M("sim-beyond-ge", R, "    return np.logical_or(lateness > limit,", "    return np.logical_or(lateness >= limit,",
      "a lateness equal to the limit is past it whatever the edge"),
    M("sim-beyond-ontime-late", R, "lateness == limit), lateness > 0))", "lateness == limit), lateness >= 0))",
      "an on-time run is past a zero limit under the late edge"),
    M("sim-beyond-edge-flipped", R, "np.logical_and(np.logical_and(edge == 1, lateness == limit)",
      "np.logical_and(np.logical_and(edge == 0, lateness == limit)",
      "the edges swapped"),
    M("sim-outcome-latest-first", R, "np.logical_and(mode == C_LATEST, from_end == 0)",
      "np.logical_and(mode == C_LATEST, pos == 0)", "latest keeps the oldest"),
    M("sim-outcome-bounded-le", R, "np.logical_and(mode == C_BOUNDED, from_end < limit)",
      "np.logical_and(mode == C_BOUNDED, from_end <= limit)", "bounded keeps limit + 1"),
    M("sim-outcome-earliest-skipped", R,
      "coalescing = np.logical_or(np.logical_or(mode == C_LATEST, mode == C_EARLIEST), mode == C_EDGES)",
      "coalescing = np.logical_or(mode == C_LATEST, mode == C_EDGES)",
      "earliest's dropped rows are skipped, not coalesced"),
    M("sim-outcome-edges-latest-only", R,
      "edges = np.logical_and(mode == C_EDGES, np.logical_or(pos == 0, from_end == 0))",
      "edges = np.logical_and(mode == C_EDGES, from_end == 0)",
      "earliest_and_latest runs only the newest (Airflow's stale stored next run lost)", tests=ISSUE29),
    M("sim-created-ahead-no-lookahead", R, "out[order] = rank < np.maximum(runs[order], within + 1)",
      "out[order] = rank < runs[order]", "runs due within the look-ahead time are not created ahead", tests=ISSUE29),
    M("sim-resume-drops", C, "        if resumes[members].any():\n", "        if False:\n",
      "on_resume='catch_up' drops the paused occurrences as 'drop' does", tests=ISSUE29),
    M("sim-groups-no-wake-key", R, "order = np.lexsort((due, wake_at, sched))", "order = np.lexsort((due, sched))",
      "a schedule's missed rows of different wake-ups form one backlog"),
    # --- rules.py: budget periods and charge ------------------------------------------------------
    M("sim-period-week", R, "        return (day + 3) // 7", "        return (day + 4) // 7",
      "ISO weeks start on Sunday"),
    M("sim-period-j1-left", R, "j1 = int(np.searchsorted(table.utc, int(t.max()) // US, side=\"right\"))",
      "j1 = int(np.searchsorted(table.utc, int(t.max()) // US, side=\"left\"))",
      "an instant exactly at a transition reads the offset before it"),
    M("sim-period-scalar-left", R, "return (t + offsets_us[np.searchsorted(utc_us, t, side=\"right\")]) // DAY_US",
      "return (t + offsets_us[np.searchsorted(utc_us, t, side=\"left\")]) // DAY_US",
      "the period of an instant at a transition uses the old offset (local_day: columns and loops)", RULED),
    M("sim-month-century-leap", R, "    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)",
      "    doy = doe - (365 * yoe + yoe // 4)",
      "Hinnant's month with every fourth year a leap year (1900, 2100 taken as leap years)", RULED),
    M("sim-period-start-shift", R, "r = resolve_wall(np.atleast_1d(wall), table, gap=\"next_valid\", fold=\"first\")",
      "r = resolve_wall(np.atleast_1d(wall), table, gap=\"shift\", fold=\"first\")",
      "a period whose midnight does not exist opens an hour late",
      equivalent="every gap of 2026f (1970-2100) that skips a local midnight begins at that midnight, where "
                 "shift and next_valid give the same instant (checked over every zone); a gap starting before "
                 "midnight would tell them apart"),
    M("sim-fits-strict", R, "return spent + amount <= limit + FITS_TOLERANCE", "return spent + amount < limit",
      "a run that fills the budget exactly is held"),
    M("sim-charge-once", R, "    return cost * attempts", "    return cost",
      "a retried run is charged once (the issue's 41 tenant-days over budget)"),
    # --- columns.py --------------------------------------------------------------------------------
    M("sim-backlog-wall-order", C, "order, pos, size = backlog_groups(s_b, run.pick[members], run.due[members])",
      "order, pos, size = backlog_groups(s_b, run.pick[members], run.nominal[members])",
      "a backlog ordered by wall time (01:45 EDT after 01:30 EST)"),
    M("sim-join-not-earliest", C,
      "coalescing = np.array([CATCHUP[\"latest\"], CATCHUP[\"earliest\"], CATCHUP[\"bounded\"], "
      "CATCHUP[\"earliest_and_latest\"]])",
      "coalescing = np.array([CATCHUP[\"latest\"], CATCHUP[\"bounded\"], CATCHUP[\"earliest_and_latest\"]])",
      "Temporal's earliest does not take the on-time row into its backlog"),
    M("sim-join-nothing", C, "    if joins.any():\n        cand", "    if False:\n        cand",
      "an on-time row never joins a misfired wake-up's backlog (two runs after a recovery)"),
    M("sim-join-any-schedule", C, "        cand = cand[np.isin(key(cand), wakes[joins])]\n",
      "        cand = cand[np.isin(run.s[cand], w_s[joins])]\n",
      "on-time rows of schedules without a misfire at that wake-up join too"),
    M("sim-stuck-ge", C, "stuck = size > run.p_maxmissed[s_o]", "stuck = size >= run.p_maxmissed[s_o]",
      "exactly max_missed missed times already stick"),
    M("sim-stuck-backlog-only", C, "    hit = np.union1d(rows, later)", "    hit = rows",
      "a stuck CronJob starts again at its next time"),
    M("sim-expiry-missed-only", C, "        gone &= live\n", "        gone &= missed\n",
      "a deadline tighter than the grace is not applied to on-time picks"),
    M("sim-down-missed-any-time", C,
      "return (j >= 0) & (run.due >= starts[jj]) & (run.due <= ends[jj]) & ~run.suspends[jj] & run.has_due",
      "return (j >= 0) & (run.due <= ends[jj]) & ~run.suspends[jj] & run.has_due",
      "a run due before the outage started counts as due while down"),
    M("sim-down-missed-suspend", C,
      "return (j >= 0) & (run.due >= starts[jj]) & (run.due <= ends[jj]) & ~run.suspends[jj] & run.has_due",
      "return (j >= 0) & (run.due >= starts[jj]) & (run.due <= ends[jj]) & run.has_due",
      "a suspend forgets like a restart"),
    M("sim-suspend-limit-lt", C, "left &= ends[jj] - starts[jj] <= run.p_suspend_limit[s]",
      "left &= ends[jj] - starts[jj] < run.p_suspend_limit[s]",
      "a suspend exactly as long as the limit is not caught up"),
    M("sim-suspend-mode-ignored", C,
      "w_mode = np.where(after_suspend, run.p_suspend_catchup[w_s], run.p_catchup[w_s])",
      "w_mode = run.p_catchup[w_s]", "a suspend's backlog follows catchup"),
    M("sim-suspend-mode-per-row", C, "    mode = w_mode[np.searchsorted(wakes, key(rows))]",
      "    mode = np.where(_left_by_suspend(run, rows, s_o), run.p_suspend_catchup[s_o], run.p_catchup[s_o])",
      "the on-time row a suspend's backlog takes in follows catchup (the backlog runs nothing)"),
    M("sim-down-missed-exclusive", C, "(run.due <= ends[jj]) & ~run.suspends[jj] & run.has_due",
      "(run.due < ends[jj]) & ~run.suspends[jj] & run.has_due",
      "a run due exactly at boot counts as on time (systemd's next elapse is strictly after boot)"),
    M("sim-demand-once", ORD, "charged = run.p_cost[s_c] * run.attempts_n[lo:hi][rows]", "charged = run.p_cost[s_c]",
      "budget demand counts one unit per run (retried runs settled by columns over budget)",
      [*SIM, "tests/simulation/test_columns_budgets.py"]),
    M("sim-demand-unit-retries", ORD, "and run.n * float(cost[0]) < 2**53 and run.fixed_duration else None",
      "and run.n * float(cost[0]) < 2**53 else None", "the integral-cost shortcut ignores attempts",
      [*SIM, "tests/simulation/test_columns_budgets.py"]),
    M("sim-jitter-cap", C, "cap = np.maximum(nxt[idx] - run.due[idx] - 1, 0)",
      "cap = np.maximum(nxt[idx] - run.due[idx], 0)", "jitter may reach the next occurrence"),
    M("sim-backoff-linear", R, "        d *= 2\n", "        d += int(backoff_us)\n",
      "linear backoff (rules.retry_wait, which columns and the kernels read)"),
    # --- event_loop.py (lays the scheduler-level rows out) and worker_kernel.py (the one ordered loop) -------
    M("sim-loop-held-wall-order", E, "run.due[order].astype(i64), run.key[s]",
      "run.nominal[order].astype(i64), run.key[s]", "runs held for budget ordered by wall time", LOOP),
    M("sim-loop-charge-once", E, "charge(run.p_cost[s], run.attempts_n[order]).astype(np.float64)",
      "run.p_cost[s].astype(np.float64)", "the ordered path charges a retried run once", LOOP),
    M("sim-loop-no-deadline-at-slot", K, "                    if t > r_deadline[r] and not j_nodl[j]:",
      "                    if False:", "a run is never too late when it gets its slot (in turn, queued, Forbid's "
      "blocked time)", LOOP),
    M("sim-loop-buffered-expires", "calsim/simulation/worker_steps.py", "            j_nodl[nb] = True",
      "            j_nodl[nb] = False",
      "a run released from buffer_one/buffer_all expires past max_lateness (Temporal starts it)", LOOP),
    M("sim-loop-latest-keeps-old", K, "                if mode == BUFFER_LATEST and len(buffers[key]) > b_head[key]:\n",
      "                if False:\n", "buffer_latest keeps the older blocked time too", LOOP),
    M("sim-loop-latest-while-down", "calsim/simulation/worker_steps.py",
      "        push_event(heap, seq, up_one(t, out_lo, out_hi), LATEST, key, 0)",
      "        push_event(heap, seq, t, LATEST, key, 0)",
      "Forbid's blocked time is looked at when the Job ends even if the controller is down then, so it starts "
      "at the come-back before the time caught up there", [*LOOP, "tests/presets/test_kubernetes.py"]),
    M("sim-loop-no-pause", K, "                    if pol.pause_ptr[s] < pol.pause_ptr[s + 1] and paused_at(",
      "                    if False and paused_at(", "a held run starts while its schedule is paused", LOOP),
    M("sim-loop-batch-refused-kept", K,
      "                    if (not jobs.follower[j] and j_k[j] == 0 and j_state[j] == SKIPPED",
      "                    if (False and j_k[j] == 0 and j_state[j] == SKIPPED",
      "a refused in-turn submission keeps its backlog queued", LOOP),
    M("sim-loop-slots-while-down", K, "                if pool.scheduler_slots and hull_lo <= t < hull_hi:",
      "                if False:", "the scheduler's slots serve their queue while it is down", LOOP),
    M("sim-loop-ends-one-by-one", K, "        if kind == END and live_end_next(heap, a_status, t):",
      "        if False:", "a queued run takes a slot before the other runs ending at that instant "
      "let go of theirs", LOOP),
    # --- budget_periods.py ---------------------------------------------------------------------------
    M("sim-held-single-dropped", R, "    return np.logical_or(runs, size == 1), np.logical_and(coalesced, size != 1)",
      "    return runs, coalesced",
      "one held run under catchup=skip is dropped at the next period"),
    M("sim-paused-vector-open", R, "        out |= (t >= a) & (t < b)", "        out |= (t > a) & (t < b)",
      "a run eligible exactly at a Pause is not paused"),
    M("sim-held-expiry-no-edge", R, "        if beyond(t - eligible[i], max_lateness[i], edge[i]):",
      "        if t - eligible[i] > max_lateness[i]:",
      "held runs ignore the scheduler's edge at a period's opening (held_at_opening: loop and columns)", RULED),
    M("sim-held-wall-rank", R, "    order = by_due[np.argsort(rank[by_due], kind=\"mergesort\")]",
      "    order = np.argsort(rank, kind=\"mergesort\")",
      "held runs of one schedule arrive in held order, not due order", RULED,
      equivalent="a schedule's runs are held in pick order, and picks keep due order within a schedule (jitter "
                 "is capped before the next occurrence; runs held again at an opening go back in their order, "
                 "before newer picks), so held order is due order"),
    M("sim-periods-end-inclusive", B, "        if T >= end:", "        if T > end:",
      "a period opening exactly at the horizon's end still starts held runs"),
    M("sim-periods-late-opening-starts", B,
      "late = beyond(tu - run.eligible[b_rows], run.p_maxlate[b_s], run.p_edge[b_s]) if tu > T else None",
      "late = None", "runs released by an opening while the scheduler is down start past their max_lateness when it "
      "is up"),
    M("sim-periods-event-order", B, "sub = np.lexsort((run.due[fr[pos]], s_f[pos], pk[pos]))",
      "sub = np.lexsort((run.nominal[fr[pos]], s_f[pos], pk[pos]))",
      "ties of one pick and schedule in wall order (the loop uses due order)"),
    # --- worker_kernel.py (the attempt-by-attempt loop, composed) ---------------------------------------
    M("sim-worker-renew-from-claim", W, "x = st0 + (t - st0) // heartbeat * heartbeat + lease",
      "x = st0 + lease", "a renewed lease is never extended by heartbeats after a crash", WORKERS),
    M("sim-worker-bucket-rounded", W, "tat[rl] += lim.rl_period[rl]",
      "tat[rl] = max(tat[rl], (go_at - t) * lim.rl_count[rl]) + lim.rl_period[rl]",
      "the bucket drifts by its rounded starts", WORKERS),
    M("sim-worker-no-recheck", W, "                        and running[key] >= max(pol.max_active[s], 1)):",
      "                        and False):", "a job leaving the queue ignores the runs of its schedule going",
      WORKERS),
    M("sim-worker-token-not-going", W,
      "                        if j_k[j] == 0 and not j_live[j]:  # an instance executing",
      "                        if False:  # an instance executing", "a job holding a worker while it waits for its "
      "token does not count against max_active", WORKERS),
    M("sim-worker-ageing-off", "calsim/simulation/worker_steps.py",
      "            aged = level_priority[k] + (t - qat[h]) // AGEING_US",
      "            aged = level_priority[k]", "low priority starves behind a stream of high priority", WORKERS),
    M("sim-worker-budget-ignored", W,
      "                    if not before + rows.chg[r] <= budgets.ceiling[acct]:  # rules.fits",
      "                    if False:", "workers never wait for budget", WORKERS),
]
