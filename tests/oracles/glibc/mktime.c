/* calsim test oracle: glibc's own localtime_r() and mktime(), one call per input line, in one process
 * (so mktime's remembered offset carries from call to call, as in systemd's calendar walk).
 *
 * Input lines:  "M tm_year tm_mon tm_mday tm_hour tm_min tm_sec tm_isdst"  -> mktime()
 *               "L t"                                                       -> localtime_r()
 * Output lines: "t tm_year tm_mon tm_mday tm_hour tm_min tm_sec tm_isdst tm_wday tm_yday"
 *               (mktime's return value first; "L" answers start with the t asked about).
 * The zone is the environment's TZ. No logic of its own. */
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(void) {
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        struct tm tm;
        long long t = 0;
        memset(&tm, 0, sizeof tm);
        if (line[0] == 'L') {
            time_t x;
            if (sscanf(line + 1, "%lld", &t) != 1) return 2;
            x = (time_t) t;
            localtime_r(&x, &tm);
        } else if (line[0] == 'M') {
            if (sscanf(line + 1, "%d %d %d %d %d %d %d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                       &tm.tm_min, &tm.tm_sec, &tm.tm_isdst) != 7) return 2;
            t = (long long) mktime(&tm);
        } else {
            return 2;
        }
        printf("%lld %d %d %d %d %d %d %d %d %d\n", t, tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min,
               tm.tm_sec, tm.tm_isdst, tm.tm_wday, tm.tm_yday);
        fflush(stdout);
    }
    return 0;
}
