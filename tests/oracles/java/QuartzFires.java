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
//   {"op": "misfire", "expr": ..., "zone": ..., "instruction": "DO_NOTHING", "threshold_ms": 60000,
//    "disallow": false, "steps": [...]}
//     -> {"steps": [...]}  one RAMJobStore with one job and one CronTriggerImpl, driven through the steps below
//        on a faked clock (libfaketime, FAKETIME_TIMESTAMP_FILE: needs "faked_clock": true). Each step is
//        {"do": "schedule", "at": ms}                     storeJobAndTrigger (startTime = at, computeFirstFireTime)
//        {"do": "acquire", "at": ms}                      acquireNextTriggers(at, 1, 0L)
//        {"do": "fire", "at": ms}                         triggersFired(the acquired trigger)
//        {"do": "complete", "at": ms}                     triggeredJobComplete(NOOP)
//        {"do": "reset"}                                  a new RAMJobStore (a restarted JVM)
//        and each answer {"next": ms|null, "misfired": [nextFireTime, ...], "acquired": bool, "fired": ms|null}
//        (next: the stored trigger's getNextFireTime() after the step; misfired: the nextFireTime of each
//        notifyTriggerListenersMisfired during it; fired: the fire time triggersFired reported)
//
// Instants are whole seconds (the calendar methods) or milliseconds (the misfire steps); a bad request or an
// exception answers {"error": "<class>: <message>"}.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.text.ParseException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
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
        if ("misfire".equals(op)) {
            return Misfires.run(req);
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
        v.put("faked_clock", System.getenv("FAKETIME_TIMESTAMP_FILE") != null);
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

    // -- RAMJobStore's misfire handling on a faked clock ------------------------------------------------------

    /** A job that does nothing (the steps say when it completes). */
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
        final List<Object> misfired = new ArrayList<>();

        public void notifyTriggerListenersMisfired(Trigger trigger) {
            Date nft = trigger.getNextFireTime();  // a clone taken before updateAfterMisfire
            misfired.add(nft == null ? null : nft.getTime());
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

    static final class Misfires {
        private static final DateTimeFormatter STAMP =
                DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS").withZone(ZoneOffset.UTC);

        /** Sets the faked clock (libfaketime re-reads the file at every clock call: FAKETIME_NO_CACHE=1). */
        static void clock(long ms) throws Exception {
            String file = System.getenv("FAKETIME_TIMESTAMP_FILE");
            if (file == null) {
                throw new IllegalStateException("no faked clock (run under libfaketime with FAKETIME_TIMESTAMP_FILE)");
            }
            Path p = Paths.get(file);
            Files.write(p, (STAMP.format(Instant.ofEpochMilli(ms)) + "\n").getBytes(StandardCharsets.US_ASCII));
            long now = System.currentTimeMillis();
            if (now != ms) {
                throw new IllegalStateException("faked clock reads " + now + " after setting " + ms);
            }
        }

        static Object run(Map<String, Object> req) throws Exception {
            String expr = (String) req.get("expr");
            TimeZone tz = zone(req.getOrDefault("zone", "UTC"));
            int instruction = instruction((String) req.get("instruction"));
            long threshold = asLong(req.get("threshold_ms"));
            boolean disallow = Boolean.TRUE.equals(req.get("disallow"));
            RAMJobStore store = null;
            Signals signals = null;
            JobDetailImpl job = new JobDetailImpl();
            job.setKey(new JobKey("job", "calsim"));
            job.setJobClass(disallow ? NoopSerialJob.class : NoopJob.class);
            job.setDurability(true);
            OperableTrigger acquired = null;
            OperableTrigger running = null;
            List<Object> answers = new ArrayList<>();
            for (Object s : asList(req.get("steps"))) {
                Map<String, Object> step = asMap(s);
                String what = (String) step.get("do");
                Map<String, Object> ans = new LinkedHashMap<>();
                if (step.get("at") != null) {
                    clock(asLong(step.get("at")));
                }
                int seen = signals == null ? 0 : signals.misfired.size();
                switch (what) {
                    case "reset":
                        store = null;
                        acquired = running = null;
                        break;
                    case "schedule": {
                        store = new RAMJobStore();
                        signals = new Signals();
                        seen = 0;
                        store.setMisfireThreshold(threshold);
                        store.initialize(new SimpleClassLoadHelper(), signals);
                        CronTriggerImpl trigger = new CronTriggerImpl();
                        trigger.setName("trigger");
                        trigger.setGroup("calsim");
                        trigger.setJobKey(job.getKey());
                        trigger.setCronExpression(expr);
                        trigger.setTimeZone(tz);
                        trigger.setStartTime(new Date(asLong(step.get("at"))));  // TriggerBuilder.startNow()
                        trigger.setMisfireInstruction(instruction);
                        trigger.computeFirstFireTime(null);  // QuartzScheduler.scheduleJob does this
                        store.storeJobAndTrigger(job, trigger);
                        break;
                    }
                    case "acquire": {
                        List<OperableTrigger> got = store.acquireNextTriggers(asLong(step.get("at")), 1, 0L);
                        acquired = got.isEmpty() ? null : got.get(0);
                        ans.put("acquired", acquired != null);
                        break;
                    }
                    case "fire": {
                        List<TriggerFiredResult> res = store.triggersFired(Collections.singletonList(acquired));
                        Object fired = null;
                        if (!res.isEmpty() && res.get(0).getTriggerFiredBundle() != null) {
                            running = res.get(0).getTriggerFiredBundle().getTrigger();
                            Date sched = res.get(0).getTriggerFiredBundle().getScheduledFireTime();
                            fired = sched == null ? null : sched.getTime();
                        }
                        ans.put("fired", fired);
                        acquired = null;
                        break;
                    }
                    case "complete":
                        store.triggeredJobComplete(running, job, Trigger.CompletedExecutionInstruction.NOOP);
                        running = null;
                        break;
                    default:
                        throw new IllegalArgumentException("unknown step " + what);
                }
                if (store != null) {
                    OperableTrigger t = store.retrieveTrigger(new org.quartz.TriggerKey("trigger", "calsim"));
                    Date nft = t == null ? null : t.getNextFireTime();
                    ans.put("next", nft == null ? null : nft.getTime());
                    ans.put("misfired", new ArrayList<>(signals.misfired.subList(seen, signals.misfired.size())));
                }
                answers.add(ans);
            }
            return Collections.singletonMap("steps", answers);
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
