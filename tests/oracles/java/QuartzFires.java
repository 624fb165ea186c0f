// QuartzFires: Quartz 2.3.2's own CronExpression (and RAMJobStore's misfire handling) behind a line protocol for
// calsim's tests (tests/oracles/quartz_jar.py compiles it against Debian's libquartz2-java and runs it).
//
// Ours: no scheduling logic of its own; each request names what to call on the real classes. One JSON request
// per input line, one JSON answer per output line:
//
//   {"op": "version"}
//     -> {"quartz": "2.3.2", "java": "17.0.15", "tzdb": "2025a", "max_year": 2126, "faked_clock": false}
//   {"expr": "0 30 1 * * ?", "zone": "America/New_York"}
//     -> {"ok": true} or {"error": "<ParseException message>"}           new CronExpression(expr)
//   {"expr": ..., "zone": ..., "after": [<unix s>, ...], "n": 5, "until": <unix s>, "timeout_ms": 2000}
//     -> {"next": [[t1, t2, ...], ...]}   n chained getTimeAfter() calls from each "after" (CronTriggerImpl's
//        walk: each fire time is the getTimeAfter of the one before); a chain ends early at null or at "until";
//        with "timeout_ms", a call still running after that long is stopped: {"next": ..., "timeout": [i, ...]}
//        (the chains whose last call never ended)
//   {"expr": ..., "zone": ..., "satisfied": [<unix s>, ...]}
//     -> {"satisfied": [true, false, ...]}                                isSatisfiedBy(date)
//   {"expr": ..., "sets": true}
//     -> {"seconds": [...], "minutes": ..., "hours", "daysOfMonth", "months", "daysOfWeek", "years",
//         "lastdayOfMonth": bool, "nearestWeekday": bool, "lastdayOffset": n, "lastdayOfWeek": bool,
//         "nthdayOfWeek": n}   CronExpression's fields after buildExpression (98 is '?', 99 is '*'), by reflection
//   {"zone": ..., "walls": [[y, mo, d, h, mi, s], ...]}
//     -> {"utc": [<unix s>, ...]}   a lenient GregorianCalendar(zone) given those fields (month 1-based, any
//        range), getTimeInMillis(): the JDK's rule for a wall time in a gap or a fold
//   {"zone": ..., "fields": [<unix s>, ...]}
//     -> {"fields": [[y, mo, d, h, mi, s, dow], ...]}   GregorianCalendar(zone).setTimeInMillis, get (dow 1 = Sunday)
//   {"op": "trigger", "expr": ..., "zone": ..., "instruction": "DO_NOTHING", "threshold_ms": 60000,
//    "disallow": false, "duration_ms": 0, "start_ms": ..., "end_ms": ..., "outages": [[s_ms, e_ms, "suspend"], ...]}
//     -> {"fires": [[scheduled_ms, at_ms, once_now, misfired_ms|null], ...], "misfires": [[nft_ms, now_ms, cause]]}
//        one CronTriggerImpl in a real RAMJobStore (store.setMisfireThreshold, storeJobAndTrigger,
//        acquireNextTriggers, triggersFired, triggeredJobComplete) on a faked clock (ClockAgent below, run
//        with -javaagent: "faked_clock": true in the version answer). The scheduler thread around it
//        is ours (Timeline below, the same simplification as tests/oracles/quartz.py's run_trigger: the thread
//        looks at the trigger at its next fire time, when its blocking job ends, or when an outage ends); every
//        decision -- misfired or not, the misfire instruction's new next fire time, the fire time after each
//        fire, blocking -- is the store's and the trigger's own. An outage "suspend" is a paused JVM (nothing
//        runs, the store stays); "down" a restart (a new RAMJobStore, the trigger scheduled again with
//        startNow() at the restart). misfires: each notifyTriggerListenersMisfired (the nextFireTime it saw),
//        with why the trigger was late ("due", "blocked": its @DisallowConcurrentExecution job ran, "outage").
//
// Instants are whole seconds (the calendar methods) or milliseconds (the trigger timeline); a bad request or an
// exception answers {"error": "<class>: <message>"}.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.zone.ZoneRulesProvider;
import java.util.ArrayList;
import java.util.Calendar;
import java.util.Collections;
import java.util.Date;
import java.util.GregorianCalendar;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;

import org.quartz.CronExpression;
import org.quartz.DisallowConcurrentExecution;
import org.quartz.Job;
import org.quartz.JobExecutionContext;
import org.quartz.JobKey;
import org.quartz.SchedulerException;
import org.quartz.Trigger;
import org.quartz.impl.JobDetailImpl;
import org.quartz.impl.triggers.CronTriggerImpl;
import org.quartz.simpl.RAMJobStore;
import org.quartz.simpl.SimpleClassLoadHelper;
import org.quartz.spi.OperableTrigger;
import org.quartz.spi.SchedulerSignaler;
import org.quartz.spi.TriggerFiredResult;

public final class QuartzFires {

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            Object answer;
            try {
                answer = serve(asMap(new Json(line).value()));
            } catch (Throwable e) {
                answer = Collections.singletonMap("error", e.getClass().getName() + ": " + e.getMessage());
            }
            out.println(Json.write(answer));
            out.flush();
        }
    }

    private static final Map<String, TimeZone> ZONES = new HashMap<>();

    static TimeZone zone(Object name) {
        String id = (String) name;
        return ZONES.computeIfAbsent(id, k -> {
            TimeZone tz = TimeZone.getTimeZone(k);
            if (!tz.getID().equals(k)) {  // getTimeZone falls back to GMT for an unknown id
                throw new IllegalArgumentException("unknown zone " + k);
            }
            return tz;
        });
    }

    static Object serve(Map<String, Object> req) throws Exception {
        String op = (String) req.get("op");
        if ("version".equals(op)) {
            return version();
        }
        if ("trigger".equals(op)) {
            return new Timeline(req).run(req);
        }
        if (req.containsKey("walls")) {
            return walls(zone(req.get("zone")), asList(req.get("walls")));
        }
        if (req.containsKey("fields")) {
            return fields(zone(req.get("zone")), asList(req.get("fields")));
        }
        CronExpression cron;
        try {
            cron = new CronExpression((String) req.get("expr"));
        } catch (ParseException e) {
            return Collections.singletonMap("error", e.getMessage());
        }
        cron.setTimeZone(zone(req.getOrDefault("zone", "UTC")));
        if (req.containsKey("after")) {
            return chains(cron, req);
        }
        if (req.containsKey("sets")) {
            return sets(cron);
        }
        if (req.containsKey("satisfied")) {
            List<Object> when = asList(req.get("satisfied"));
            List<Object> ok = new ArrayList<>(when.size());
            for (Object t : when) {
                ok.add(cron.isSatisfiedBy(new Date(asLong(t) * 1000L)));
            }
            return Collections.singletonMap("satisfied", ok);
        }
        return Collections.singletonMap("ok", true);
    }

    static Map<String, Object> version() throws Exception {
        Map<String, Object> v = new LinkedHashMap<>();
        java.util.Properties pom = new java.util.Properties();
        try (java.io.InputStream s = CronExpression.class.getResourceAsStream(
                "/META-INF/maven/org.quartz-scheduler/quartz/pom.properties")) {
            if (s != null) {
                pom.load(s);
            }
        }
        v.put("quartz", pom.getProperty("version", "?"));
        v.put("java", System.getProperty("java.version"));
        v.put("tzdb", ZoneRulesProvider.getVersions("UTC").lastKey());
        java.lang.reflect.Field max = CronExpression.class.getDeclaredField("MAX_YEAR");
        max.setAccessible(true);
        v.put("max_year", max.getInt(null));  // Calendar.getInstance().get(YEAR) + 100 at class load
        v.put("faked_clock", FakeClock.installed);
        return v;
    }

    static Map<String, Object> sets(CronExpression cron) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String name : new String[]{"seconds", "minutes", "hours", "daysOfMonth", "months", "daysOfWeek", "years",
                                        "lastdayOfMonth", "nearestWeekday", "lastdayOffset", "lastdayOfWeek",
                                        "nthdayOfWeek"}) {
            java.lang.reflect.Field f = CronExpression.class.getDeclaredField(name);
            f.setAccessible(true);
            Object v = f.get(cron);
            if (v instanceof java.util.Collection) {
                List<Object> values = new ArrayList<>();
                for (Object x : (java.util.Collection<?>) v) {
                    values.add(((Integer) x).longValue());
                }
                v = values;
            } else if (v instanceof Integer) {
                v = ((Integer) v).longValue();
            }
            out.put(name, v);
        }
        return out;
    }

    static Map<String, Object> chains(CronExpression cron, Map<String, Object> req) throws Exception {
        List<Object> after = asList(req.get("after"));
        int n = (int) asLong(req.get("n"));
        Long until = req.get("until") == null ? null : asLong(req.get("until"));
        Long timeout = req.get("timeout_ms") == null ? null : asLong(req.get("timeout_ms"));
        List<Object> next = new ArrayList<>(after.size());
        List<Object> timedOut = new ArrayList<>();
        if (timeout == null) {
            new Chains(cron, after, 0, n, until, next).run();
        } else {
            // The chains run on a thread of their own, watched: a getTimeAfter call still running after
            // timeout_ms is stopped (2.3.2's loop can run for ever, e.g. a W day whose time is in a gap), its
            // chain ends there, and the next chains run on a new thread.
            int from = 0;
            while (from < after.size()) {
                Chains c = new Chains(cron, after, from, n, until, next);
                Thread th = new Thread(c, "getTimeAfter");
                th.setDaemon(true);
                th.start();
                boolean stopped = false;
                while (th.isAlive()) {
                    long ran = (System.nanoTime() - c.callStarted) / 1_000_000L;
                    if (ran >= timeout) {
                        stop(th);
                        stopped = true;
                        break;
                    }
                    th.join(Math.max(1L, timeout - ran));
                }
                if (c.failure != null) {
                    throw c.failure;
                }
                if (!stopped) {
                    break;
                }
                next.add(c.partial);  // the chain whose last call never ended
                timedOut.add((long) c.current);
                from = c.current + 1;
            }
        }
        Map<String, Object> ans = new LinkedHashMap<>();
        ans.put("next", next);
        if (!timedOut.isEmpty()) {
            ans.put("timeout", timedOut);
        }
        return ans;
    }

    @SuppressWarnings({"deprecation", "removal"})
    static void stop(Thread th) throws InterruptedException {
        th.stop();  // Java 17 still stops a thread (the loop never checks for interruption)
        th.join();
    }

    /** Chains of getTimeAfter from after[from..], appended to out; callStarted: when the current call began. */
    static final class Chains implements Runnable {
        final CronExpression cron;
        final List<Object> after;
        final int from;
        final int n;
        final Long until;
        final List<Object> out;
        volatile long callStarted = System.nanoTime();
        volatile int current;
        volatile List<Object> partial;
        volatile Exception failure;

        Chains(CronExpression cron, List<Object> after, int from, int n, Long until, List<Object> out) {
            this.cron = cron;
            this.after = after;
            this.from = from;
            this.n = n;
            this.until = until;
            this.out = out;
        }

        public void run() {
            try {
                for (int i = from; i < after.size(); i++) {
                    List<Object> chain = new ArrayList<>();
                    partial = chain;
                    current = i;
                    Date t = new Date(asLong(after.get(i)) * 1000L);
                    for (int k = 0; k < n; k++) {
                        callStarted = System.nanoTime();
                        Date d = cron.getTimeAfter(t);
                        if (d == null || (until != null && d.getTime() >= until * 1000L)) {
                            break;
                        }
                        chain.add(d.getTime() / 1000L);
                        t = d;
                    }
                    callStarted = Long.MAX_VALUE / 2;  // between chains: nothing to time
                    synchronized (out) {
                        out.add(chain);
                    }
                }
            } catch (Exception e) {
                failure = e;
            }
        }
    }

    static Map<String, Object> walls(TimeZone tz, List<Object> walls) {
        List<Object> utc = new ArrayList<>(walls.size());
        for (Object w : walls) {
            List<Object> f = asList(w);
            GregorianCalendar cal = new GregorianCalendar(tz);
            cal.clear();
            cal.set((int) asLong(f.get(0)), (int) asLong(f.get(1)) - 1, (int) asLong(f.get(2)),
                    (int) asLong(f.get(3)), (int) asLong(f.get(4)), (int) asLong(f.get(5)));
            utc.add(Math.floorDiv(cal.getTimeInMillis(), 1000L));
        }
        return Collections.singletonMap("utc", utc);
    }

    static Map<String, Object> fields(TimeZone tz, List<Object> instants) {
        List<Object> all = new ArrayList<>(instants.size());
        for (Object t : instants) {
            GregorianCalendar cal = new GregorianCalendar(tz);
            cal.setTimeInMillis(asLong(t) * 1000L);
            List<Object> f = new ArrayList<>();
            f.add((long) cal.get(Calendar.YEAR));
            f.add((long) cal.get(Calendar.MONTH) + 1);
            f.add((long) cal.get(Calendar.DAY_OF_MONTH));
            f.add((long) cal.get(Calendar.HOUR_OF_DAY));
            f.add((long) cal.get(Calendar.MINUTE));
            f.add((long) cal.get(Calendar.SECOND));
            f.add((long) cal.get(Calendar.DAY_OF_WEEK));
            all.add(f);
        }
        return Collections.singletonMap("fields", all);
    }

    // -- a faked clock for Quartz's classes ----------------------------------------------------------------

    /** The instant Quartz's classes read as "now" once ClockAgent has rewritten them (milliseconds). */
    public static final class FakeClock {
        public static volatile long millis;
        public static volatile boolean installed;

        public static long currentTimeMillis() {
            return millis;
        }
    }

    /**
     * A Java agent (``-javaagent``, Premain-Class) that rewrites, in every class under org/quartz/ as it loads,
     * ``System.currentTimeMillis()`` into ``FakeClock.currentTimeMillis()`` and ``new Date()`` into
     * ``new Date(FakeClock.currentTimeMillis())``: the clock reads of RAMJobStore (applyMisfire,
     * acquireNextTriggers, triggersFired) and CronTriggerImpl (updateAfterMisfire). Nothing else changes.
     * It uses the ASM copy inside the JDK (--add-exports java.base/jdk.internal.org.objectweb.asm=ALL-UNNAMED).
     */
    public static final class ClockAgent {
        private static final String CLOCK = "QuartzFires$FakeClock";

        public static void premain(String args, java.lang.instrument.Instrumentation inst) {
            inst.addTransformer(new java.lang.instrument.ClassFileTransformer() {
                public byte[] transform(ClassLoader loader, String name, Class<?> redefined,
                                        java.security.ProtectionDomain domain, byte[] bytes) {
                    if (name == null || !name.startsWith("org/quartz/")) {
                        return null;
                    }
                    return rewrite(bytes);
                }
            });
            FakeClock.installed = true;
        }

        static byte[] rewrite(byte[] bytes) {
            final int api = jdk.internal.org.objectweb.asm.Opcodes.ASM8;
            final int invokestatic = jdk.internal.org.objectweb.asm.Opcodes.INVOKESTATIC;
            final int invokespecial = jdk.internal.org.objectweb.asm.Opcodes.INVOKESPECIAL;
            final boolean[] changed = {false};
            jdk.internal.org.objectweb.asm.ClassReader reader = new jdk.internal.org.objectweb.asm.ClassReader(bytes);
            jdk.internal.org.objectweb.asm.ClassWriter writer = new jdk.internal.org.objectweb.asm.ClassWriter(
                    reader, jdk.internal.org.objectweb.asm.ClassWriter.COMPUTE_MAXS);
            reader.accept(new jdk.internal.org.objectweb.asm.ClassVisitor(api, writer) {
                @Override
                public jdk.internal.org.objectweb.asm.MethodVisitor visitMethod(
                        int access, String name, String desc, String signature, String[] exceptions) {
                    return new jdk.internal.org.objectweb.asm.MethodVisitor(
                            api, super.visitMethod(access, name, desc, signature, exceptions)) {
                        @Override
                        public void visitMethodInsn(int op, String owner, String n, String d, boolean itf) {
                            if (op == invokestatic && owner.equals("java/lang/System")
                                && n.equals("currentTimeMillis")) {
                                super.visitMethodInsn(invokestatic, CLOCK, "currentTimeMillis", "()J", false);
                                changed[0] = true;
                            } else if (op == invokespecial && owner.equals("java/util/Date") && n.equals("<init>")
                                       && d.equals("()V")) {
                                super.visitMethodInsn(invokestatic, CLOCK, "currentTimeMillis", "()J", false);
                                super.visitMethodInsn(invokespecial, "java/util/Date", "<init>", "(J)V", false);
                                changed[0] = true;
                            } else {
                                super.visitMethodInsn(op, owner, n, d, itf);
                            }
                        }
                    };
                }
            }, 0);
            return changed[0] ? writer.toByteArray() : null;
        }
    }

    // -- RAMJobStore's misfire handling on a faked clock ------------------------------------------------------

    /** A job that does nothing (the timeline says when it completes). */
    public static final class NoopJob implements Job {
        public void execute(JobExecutionContext context) {
        }
    }

    /** The same, marked @DisallowConcurrentExecution (RAMJobStore blocks its triggers while it runs). */
    @DisallowConcurrentExecution
    public static final class NoopSerialJob implements Job {
        public void execute(JobExecutionContext context) {
        }
    }

    /** Records the misfires RAMJobStore.applyMisfire signals; ignores everything else. */
    static final class Signals implements SchedulerSignaler {
        final List<Long> misfired = new ArrayList<>();

        public void notifyTriggerListenersMisfired(Trigger trigger) {
            misfired.add(trigger.getNextFireTime().getTime());  // a clone taken before updateAfterMisfire
        }

        public void notifySchedulerListenersFinalized(Trigger trigger) {
        }

        public void notifySchedulerListenersJobDeleted(JobKey jobKey) {
        }

        public void signalSchedulingChange(long candidateNewNextFireTime) {
        }

        public void notifySchedulerListenersError(String string, SchedulerException jpe) {
        }
    }

    static final class Timeline {
        private static final org.quartz.TriggerKey KEY = new org.quartz.TriggerKey("trigger", "calsim");

        final String expr;
        final TimeZone tz;
        final int instruction;
        final long threshold;
        final JobDetailImpl job = new JobDetailImpl();
        RAMJobStore store;
        Signals signals;

        Timeline(Map<String, Object> req) {
            expr = (String) req.get("expr");
            tz = zone(req.getOrDefault("zone", "UTC"));
            instruction = instruction((String) req.get("instruction"));
            threshold = asLong(req.get("threshold_ms"));
            job.setKey(new JobKey("job", "calsim"));
            job.setJobClass(Boolean.TRUE.equals(req.get("disallow")) ? NoopSerialJob.class : NoopJob.class);
            job.setDurability(true);
        }

        /** Sets the faked clock Quartz's classes read (see ClockAgent). */
        static void clock(long ms) {
            if (!FakeClock.installed) {
                throw new IllegalStateException("no faked clock (run with -javaagent: see ClockAgent)");
            }
            FakeClock.millis = ms;
        }

        /** The application schedules the trigger at ms with TriggerBuilder.startNow() (a new store: a new JVM). */
        void schedule(long ms) throws Exception {
            clock(ms);
            store = new RAMJobStore();
            signals = new Signals();
            store.setMisfireThreshold(threshold);
            store.initialize(new SimpleClassLoadHelper(), signals);
            CronTriggerImpl trigger = new CronTriggerImpl();
            trigger.setKey(KEY);
            trigger.setJobKey(job.getKey());
            trigger.setCronExpression(expr);
            trigger.setTimeZone(tz);
            trigger.setStartTime(new Date(ms));
            trigger.setMisfireInstruction(instruction);
            trigger.computeFirstFireTime(null);  // QuartzScheduler.scheduleJob
            store.storeJobAndTrigger(job, trigger);
        }

        Long next() throws Exception {
            OperableTrigger t = store.retrieveTrigger(KEY);
            Date nft = t == null ? null : t.getNextFireTime();
            return nft == null ? null : nft.getTime();
        }

        static long[] outageAt(List<Object> outages, long t) {
            for (Object o : outages) {
                List<Object> x = asList(o);
                long s = asLong(x.get(0));
                long e = asLong(x.get(1));
                if (s <= t && t < e) {
                    return new long[]{s, e, "down".equals(x.get(2)) ? 1 : 0};
                }
            }
            return null;
        }

        Object run(Map<String, Object> req) throws Exception {
            long start = asLong(req.get("start_ms"));
            long end = asLong(req.get("end_ms"));
            long duration = asLong(req.getOrDefault("duration_ms", 0L));
            boolean disallow = Boolean.TRUE.equals(req.get("disallow"));
            List<Object> outages = asList(req.getOrDefault("outages", new ArrayList<>()));
            List<Object> fires = new ArrayList<>();
            List<Object> misfires = new ArrayList<>();
            schedule(start);
            long now = start;
            Long blockedUntil = null;  // @DisallowConcurrentExecution: the job's end
            OperableTrigger running = null;
            Long misfiredNft = null;  // the nextFireTime a FIRE_ONCE_NOW "now" replaces
            boolean onceNow = false;
            while (true) {
                Long nft = next();
                if (nft == null) {
                    break;
                }
                // The next moment the scheduler thread looks at the trigger.
                long t = Math.max(now, nft);
                String cause = "due";
                if (blockedUntil != null && blockedUntil > t) {
                    t = blockedUntil;
                    cause = "blocked";
                }
                long[] o = outageAt(outages, t);
                if (o != null) {
                    if (o[2] == 1) {  // a restart: the RAMJobStore is gone, the application schedules anew
                        schedule(o[1]);
                        now = o[1];
                        blockedUntil = null;
                        running = null;
                        misfiredNft = null;
                        onceNow = false;
                        continue;
                    }
                    t = o[1];
                    cause = "outage";
                }
                if (!onceNow && nft >= end) {
                    break;
                }
                now = t;
                clock(now);
                if (blockedUntil != null && blockedUntil <= now) {  // the job ended: the trigger is WAITING again
                    store.triggeredJobComplete(running, job, Trigger.CompletedExecutionInstruction.NOOP);
                    blockedUntil = null;
                    running = null;
                }
                int seen = signals.misfired.size();
                List<OperableTrigger> got = store.acquireNextTriggers(now, 1, 0L);
                for (Long m : signals.misfired.subList(seen, signals.misfired.size())) {
                    List<Object> rec = new ArrayList<>();
                    rec.add(m);
                    rec.add(now);
                    rec.add(cause);
                    misfires.add(rec);
                    Long after = next();
                    onceNow = after != null && after == now;
                    misfiredNft = onceNow ? m : null;
                }
                if (got.isEmpty()) {
                    continue;  // not due yet (or moved past now by DO_NOTHING): the thread waits for it
                }
                List<TriggerFiredResult> res = store.triggersFired(got);
                org.quartz.spi.TriggerFiredBundle bundle = res.get(0).getTriggerFiredBundle();
                List<Object> fire = new ArrayList<>();
                fire.add(bundle.getScheduledFireTime().getTime());
                fire.add(now);
                fire.add(onceNow);
                fire.add(misfiredNft);
                fires.add(fire);
                onceNow = false;
                misfiredNft = null;
                if (disallow && duration > 0) {
                    blockedUntil = now + duration;
                    running = bundle.getTrigger();
                } else {
                    store.triggeredJobComplete(bundle.getTrigger(), job, Trigger.CompletedExecutionInstruction.NOOP);
                }
            }
            Map<String, Object> ans = new LinkedHashMap<>();
            ans.put("fires", fires);
            ans.put("misfires", misfires);
            return ans;
        }

        static int instruction(String name) {
            switch (name) {
                case "IGNORE_MISFIRE_POLICY":
                    return Trigger.MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY;
                case "SMART_POLICY":
                    return Trigger.MISFIRE_INSTRUCTION_SMART_POLICY;
                case "FIRE_ONCE_NOW":
                    return org.quartz.CronTrigger.MISFIRE_INSTRUCTION_FIRE_ONCE_NOW;
                case "DO_NOTHING":
                    return org.quartz.CronTrigger.MISFIRE_INSTRUCTION_DO_NOTHING;
                default:
                    throw new IllegalArgumentException("unknown misfire instruction " + name);
            }
        }
    }

    // -- a small JSON reader and writer (objects, arrays, strings, integers, booleans, null) -------------------

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) {
        if (!(o instanceof Map)) {
            throw new IllegalArgumentException("expected a JSON object, got " + o);
        }
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    static List<Object> asList(Object o) {
        if (!(o instanceof List)) {
            throw new IllegalArgumentException("expected a JSON array, got " + o);
        }
        return (List<Object>) o;
    }

    static long asLong(Object o) {
        if (!(o instanceof Long)) {
            throw new IllegalArgumentException("expected an integer, got " + o);
        }
        return (Long) o;
    }

    static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object value() {
            ws();
            if (i >= s.length()) {
                throw new IllegalArgumentException("unexpected end of JSON");
            }
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++;
                ws();
                if (peek('}')) {
                    return m;
                }
                do {
                    ws();
                    String k = string();
                    ws();
                    expect(':');
                    m.put(k, value());
                    ws();
                } while (peek(','));
                expect('}');
                return m;
            }
            if (c == '[') {
                List<Object> l = new ArrayList<>();
                i++;
                ws();
                if (peek(']')) {
                    return l;
                }
                do {
                    l.add(value());
                    ws();
                } while (peek(','));
                expect(']');
                return l;
            }
            if (c == '"') {
                return string();
            }
            if (s.startsWith("true", i)) {
                i += 4;
                return true;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return false;
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            int start = i;
            if (c == '-') {
                i++;
            }
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            if (start == i || (i < s.length() && ".eE".indexOf(s.charAt(i)) >= 0)) {
                throw new IllegalArgumentException("expected an integer at " + start);
            }
            return Long.parseLong(s.substring(start, i));
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c == '\\') {
                    char e = s.charAt(i++);
                    switch (e) {
                        case 'n': b.append('\n'); break;
                        case 't': b.append('\t'); break;
                        case 'r': b.append('\r'); break;
                        case 'b': b.append('\b'); break;
                        case 'f': b.append('\f'); break;
                        case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                        default: b.append(e);
                    }
                } else {
                    b.append(c);
                }
            }
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private boolean peek(char c) {
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw new IllegalArgumentException("expected '" + c + "' at " + i);
            }
        }

        static String write(Object o) {
            StringBuilder b = new StringBuilder();
            write(b, o);
            return b.toString();
        }

        private static void write(StringBuilder b, Object o) {
            if (o == null) {
                b.append("null");
            } else if (o instanceof Map) {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) o).entrySet()) {
                    if (!first) {
                        b.append(',');
                    }
                    first = false;
                    write(b, String.valueOf(e.getKey()));
                    b.append(':');
                    write(b, e.getValue());
                }
                b.append('}');
            } else if (o instanceof List) {
                b.append('[');
                boolean first = true;
                for (Object x : (List<?>) o) {
                    if (!first) {
                        b.append(',');
                    }
                    first = false;
                    write(b, x);
                }
                b.append(']');
            } else if (o instanceof String) {
                String str = (String) o;
                b.append('"');
                for (int k = 0; k < str.length(); k++) {
                    char c = str.charAt(k);
                    if (c == '"' || c == '\\') {
                        b.append('\\').append(c);
                    } else if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
                b.append('"');
            } else {
                b.append(o);
            }
        }
    }
}
