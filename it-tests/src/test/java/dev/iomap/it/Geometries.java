package dev.iomap.it;

import dev.iomap.testkit.Geometry;
import java.util.List;

/** The geometries every adapter runs on (a method source for parameterized test classes). */
final class Geometries {

    private Geometries() {
    }

    /** @return block 1 KiB and 4 KiB × page 4 KiB and 64 KiB × single-page and 2 MiB folios */
    static List<Geometry> standard() {
        return Geometry.standard();
    }

    /**
     * @return the standard eight and one block-larger-than-page geometry (16 KiB blocks on 4 KiB
     *     pages), plus 16 KiB and 64 KiB blocks with 2 MiB folios and 64 KiB single-block folios with
     *     {@code -Dkit.allGeometries=true}: see {@link Geometry#forKitRuns()}
     */
    static List<Geometry> forKitRuns() {
        return Geometry.forKitRuns();
    }
}
