package dev.iomap.devices;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The C library's {@code open} and {@code close} with {@code errno} captured, and the means to look up
 * more calls the same way: what {@link ImageLock} and {@link VectoredWrites} share to keep a
 * descriptor of their own on an image. Only on Linux on x86_64 and aarch64, whose flag values and
 * structures those classes know.
 *
 * @param linker the native linker
 * @param lookup the C library's symbols
 * @param captureErrno the linker option that captures {@code errno} into a {@link #callState} segment
 * @param callState the layout of that segment
 * @param errno {@code errno} in it
 * @param open {@code int open(const char *, int, ...)}, variadic from its third argument
 * @param close {@code int close(int)}
 * @param fileNames the charset the JDK turns file names into bytes with ({@code sun.jnu.encoding})
 */
record NativeCalls(Linker linker, SymbolLookup lookup, Linker.Option captureErrno, StructLayout callState,
        VarHandle errno, MethodHandle open, MethodHandle close, Charset fileNames) {
    private static final System.Logger LOG = System.getLogger(NativeCalls.class.getName());

    /**
     * @param what what the caller does without the calls, for the log
     * @param deniedLevel the level to log at if native access is denied to this module
     * @return the calls, or null where they are not to be used: not Linux, not x86_64 or aarch64, or
     *     native access denied
     */
    @SuppressWarnings("restricted") // downcalls to libc's open and close: what this class is for
    static NativeCalls load(String what, System.Logger.Level deniedLevel) {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.equals("linux") || !(arch.equals("amd64") || arch.equals("aarch64"))) {
            LOG.log(System.Logger.Level.DEBUG, what + " on " + os + "/" + arch);
            return null;
        }
        try {
            Linker linker = Linker.nativeLinker();
            Linker.Option errno = Linker.Option.captureCallState("errno");
            StructLayout callState = Linker.Option.captureStateLayout();
            SymbolLookup lookup = linker.defaultLookup();
            MethodHandle open = linker.downcallHandle(lookup.findOrThrow("open"),
                    FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                    errno, Linker.Option.firstVariadicArg(2));
            MethodHandle close = linker.downcallHandle(lookup.findOrThrow("close"),
                    FunctionDescriptor.of(JAVA_INT, JAVA_INT), errno);
            VarHandle errnoHandle = callState.varHandle(MemoryLayout.PathElement.groupElement("errno"));
            return new NativeCalls(linker, lookup, errno, callState, errnoHandle, open, close, fileNameCharset());
        } catch (IllegalCallerException | UnsupportedOperationException | IllegalArgumentException e) {
            LOG.log(deniedLevel, what + ": " + e);
            return null;
        }
    }

    /**
     * @param name the C library function
     * @param descriptor its signature
     * @param options more linker options (a variadic function's first variadic argument)
     * @return a downcall handle that captures {@code errno} into its first argument, a
     *     {@link #callState} segment
     */
    @SuppressWarnings("restricted") // a downcall to the C library, as above
    MethodHandle downcall(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        Linker.Option[] all = new Linker.Option[options.length + 1];
        all[0] = captureErrno;
        System.arraycopy(options, 0, all, 1, options.length);
        return linker.downcallHandle(lookup.findOrThrow(name), descriptor, all);
    }

    /** @return the charset the JDK turns file names into bytes with ({@code sun.jnu.encoding}) */
    private static Charset fileNameCharset() {
        try {
            return Charset.forName(System.getProperty("sun.jnu.encoding", "UTF-8"));
        } catch (IllegalArgumentException e) {
            return StandardCharsets.UTF_8;
        }
    }
}
