package dev.iomap.spi;

import java.util.ServiceLoader;

/** The engine behind {@link AdapterMounts#mount}, looked up once per class loader on first use. */
final class AdapterMountsHolder {
    static final AdapterMounts ENGINE = ServiceLoader
            .load(AdapterMounts.class, AdapterMounts.class.getClassLoader())
            .findFirst().orElse(null);

    private AdapterMountsHolder() {
    }
}
