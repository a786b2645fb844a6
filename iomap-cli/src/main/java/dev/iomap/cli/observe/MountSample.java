package dev.iomap.cli.observe;

import java.util.Map;

/**
 * One value of a mount's metrics, named by Prometheus' conventions: {@code iomap_} prefix, base units
 * (bytes), {@code _total} for a counter.
 *
 * @param name the metric's name, e.g. {@code iomap_device_written_bytes_total}
 * @param labels its labels (e.g. {@code purpose=data}); empty for none
 * @param value the value
 * @param counter whether it only grows (a counter), else a gauge
 * @param help what it measures, one line
 */
public record MountSample(String name, Map<String, String> labels, double value, boolean counter, String help) {

    /** Copies the labels. */
    public MountSample {
        labels = Map.copyOf(labels);
    }

    /**
     * @return the sample's key in Prometheus' text form: {@code name} or {@code name{label="value"}}
     *     (one label at most here)
     */
    public String key() {
        if (labels.isEmpty()) {
            return name;
        }
        Map.Entry<String, String> label = labels.entrySet().iterator().next();
        return name + "{" + label.getKey() + "=\"" + label.getValue() + "\"}";
    }
}
