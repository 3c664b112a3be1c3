package klap.regress;

import java.time.LocalDate;
import java.util.Properties;

/**
 * What a GPU run's {@code env.properties} says about the machine (device, driver, CUDA version,
 * date), read the same way by the benchmark report and the scale report: a missing or empty value
 * reads as "unknown", a missing date as today's.
 */
final class RunEnv {
    private RunEnv() {
    }

    /** @return the value of {@code key} in {@code env}, or "unknown" */
    static String get(Properties env, String key) {
        String v = env.getProperty(key, "").strip();
        return v.isEmpty() ? "unknown" : v;
    }

    /** @return the run's date ({@code date} in {@code env}), else today (ISO yyyy-mm-dd) */
    static String date(Properties env) {
        String d = env.getProperty("date", "").strip();
        return d.isEmpty() ? LocalDate.now().toString() : d;
    }
}
