package dev.iomap.devices.nbd;

import static dev.iomap.devices.nbd.NbdProtocol.*;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small NBD server in the test, for what a real one cannot be made to do on cue: hold flush replies,
 * lose its cache on a "crash", stop answering, require TLS, shut down with ESHUTDOWN, advertise a small
 * maximum payload. Fixed newstyle with NBD_OPT_GO (and NBD_INFO_BLOCK_SIZE), simple replies only. Its
 * disk is two arrays: what reads see ({@link #current()}) and what survives a {@link #crash()}
 * ({@link #durable()}), which a flush, or a write with FUA, brings up to date. Records every command.
 * Thread-safe; {@link #close()} stops it.
 */
final class FakeNbdServer implements AutoCloseable {
    /** One command as received. */
    record Command(int connection, int type, int flags, long offset, int length) {
    }

    private final int size;
    private final int maxPayload;
    private final boolean writeZeroes;
    private final boolean tlsRequired;
    private final Object lock = new Object();
    private byte[] current;
    private byte[] durable;
    private final List<Command> commands = new CopyOnWriteArrayList<>();
    private final List<Socket> connections = new CopyOnWriteArrayList<>();
    private final List<Thread> threads = new CopyOnWriteArrayList<>();
    private final int port;
    private volatile ServerSocket listener;
    /** The thread accepting on {@link #listener}. */
    private volatile Thread acceptor;
    private volatile boolean holdFlushes;
    private volatile boolean silent;
    private final AtomicInteger shutdownReplies = new AtomicInteger();
    private volatile CountDownLatch flushArrived = new CountDownLatch(1);
    /** Replies held back until this many are held, then sent newest first; 0: replies go at once. */
    private volatile int holdReplies;
    private final List<Object[]> heldReplies = new ArrayList<>();
    private int connectionCount;

    private FakeNbdServer(int size, int maxPayload, boolean writeZeroes, boolean tlsRequired) throws IOException {
        this.size = size;
        this.maxPayload = maxPayload;
        this.writeZeroes = writeZeroes;
        this.tlsRequired = tlsRequired;
        this.current = new byte[size];
        this.durable = new byte[size];
        // Below the ephemeral range: after crash(), no outgoing connection can take the port from restart().
        this.listener = listen(dev.iomap.devices.LoopbackPorts.reserve());
        this.port = listener.getLocalPort();
        acceptIn(listener);
    }

    /**
     * @param size the export's bytes
     * @param maxPayload the maximum block size it advertises
     * @param writeZeroes whether it offers NBD_CMD_WRITE_ZEROES
     * @return a running server with FLUSH, FUA and TRIM
     */
    static FakeNbdServer start(int size, int maxPayload, boolean writeZeroes) throws IOException {
        return new FakeNbdServer(size, maxPayload, writeZeroes, false);
    }

    /** @return a server that answers every option with NBD_REP_ERR_TLS_REQD */
    static FakeNbdServer requiringTls() throws IOException {
        return new FakeNbdServer(1 << 20, 1 << 20, true, true);
    }

    /** @return the export's address with {@code options} */
    NbdExport export(NbdOptions options) {
        return new NbdExport("127.0.0.1", port, "fake", options);
    }

    /** @return a copy of what reads see */
    byte[] current() {
        synchronized (lock) {
            return current.clone();
        }
    }

    /** @return a copy of what survives a crash */
    byte[] durable() {
        synchronized (lock) {
            return durable.clone();
        }
    }

    /** @return every command received so far */
    List<Command> commands() {
        return List.copyOf(commands);
    }

    /** @param value whether flush replies are held back (the flush stays in flight) until {@link #crash()} */
    void holdFlushes(boolean value) {
        holdFlushes = value;
    }

    /** @return a latch counted down when the next flush arrives */
    CountDownLatch nextFlush() {
        flushArrived = new CountDownLatch(1);
        return flushArrived;
    }

    /**
     * @param count hold replies back until {@code count} requests are answered, then send the answers
     *     newest first: a client that waits for each reply before it sends the next request never gets one
     */
    void holdRepliesUntil(int count) {
        holdReplies = count;
    }

    /** @param value whether it stops answering requests (the connection stays open) */
    void silent(boolean value) {
        silent = value;
    }

    /** @param count how many next requests get ESHUTDOWN instead of being done */
    void shutdownReplies(int count) {
        shutdownReplies.set(count);
    }

    /**
     * Crashes: drops every connection and stops listening; what was not flushed is lost. Requests in
     * flight are never answered.
     */
    void crash() throws IOException {
        listener.close();
        awaitAcceptor();
        for (Socket socket : connections) {
            socket.close();
        }
        connections.clear();
        synchronized (lock) {
            current = durable.clone();
        }
    }

    /**
     * Waits (at most 10 s) for the accept thread to leave: a socket closed while a thread is blocked in
     * its accept keeps its descriptor, still listening, until that thread wakes, and on a loaded machine
     * a restart's bind met it ("Address already in use").
     */
    private void awaitAcceptor() throws IOException {
        Thread thread = acceptor;
        if (thread == null) {
            return;
        }
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException("interrupted waiting for the accept thread to leave");
        }
    }

    /** Listens again on the same port after {@link #crash()}. */
    void restart() throws IOException {
        listener = listen(port);
        acceptIn(listener);
    }

    @Override
    public void close() throws IOException {
        crash();
        for (Thread thread : threads) {
            try {
                thread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static ServerSocket listen(int port) throws IOException {
        var socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return socket;
    }

    private void acceptIn(ServerSocket on) {
        Thread thread = Thread.ofPlatform().daemon().name("fake-nbd-accept").unstarted(() -> {
            while (!on.isClosed()) {
                try {
                    Socket socket = on.accept();
                    connections.add(socket);
                    int number;
                    synchronized (lock) {
                        number = ++connectionCount;
                    }
                    threads.add(Thread.ofPlatform().daemon().name("fake-nbd-conn").start(() -> serve(socket, number)));
                } catch (IOException e) {
                    return; // closed by crash() or close()
                }
            }
        });
        acceptor = thread;
        threads.add(thread);
        thread.start();
    }

    private void serve(Socket socket, int number) {
        try (socket) {
            var in = new DataInputStream(socket.getInputStream());
            var out = new DataOutputStream(socket.getOutputStream());
            if (handshake(in, out)) {
                transmit(in, out, number);
            }
        } catch (EOFException | SocketException e) {
            // the client or crash() closed the connection
        } catch (IOException e) {
            throw new IllegalStateException("fake NBD server: " + e, e);
        }
    }

    private boolean handshake(DataInputStream in, DataOutputStream out) throws IOException {
        out.writeLong(INIT_PASSWD);
        out.writeLong(IHAVEOPT);
        out.writeShort(NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
        out.flush();
        in.readInt();
        while (true) {
            if (in.readLong() != IHAVEOPT) {
                throw new IOException("bad option magic");
            }
            int option = in.readInt();
            byte[] data = new byte[in.readInt()];
            in.readFully(data);
            if (option == NBD_OPT_ABORT) {
                optionReply(out, option, NBD_REP_ACK, new byte[0]);
                return false;
            }
            if (tlsRequired) {
                optionReply(out, option, NBD_REP_ERR_TLS_REQD, "TLS is required".getBytes(StandardCharsets.UTF_8));
            } else if (option == NBD_OPT_GO) {
                int flags = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA | NBD_FLAG_SEND_TRIM
                        | (writeZeroes ? NBD_FLAG_SEND_WRITE_ZEROES : 0);
                optionReply(out, option, NBD_REP_INFO, java.nio.ByteBuffer.allocate(12)
                        .putShort((short) NBD_INFO_EXPORT).putLong(size).putShort((short) flags).array());
                optionReply(out, option, NBD_REP_INFO, java.nio.ByteBuffer.allocate(14)
                        .putShort((short) NBD_INFO_BLOCK_SIZE).putInt(512).putInt(4096).putInt(maxPayload).array());
                optionReply(out, option, NBD_REP_ACK, new byte[0]);
                return true;
            } else {
                optionReply(out, option, NBD_REP_ERR_UNSUP, new byte[0]);
            }
        }
    }

    private static void optionReply(DataOutputStream out, int option, int type, byte[] data) throws IOException {
        out.writeLong(OPTION_REPLY_MAGIC);
        out.writeInt(option);
        out.writeInt(type);
        out.writeInt(data.length);
        out.write(data);
        out.flush();
    }

    private void transmit(DataInputStream in, DataOutputStream out, int number) throws IOException {
        while (true) {
            if (in.readInt() != NBD_REQUEST_MAGIC) {
                throw new IOException("bad request magic");
            }
            int flags = in.readUnsignedShort();
            int type = in.readUnsignedShort();
            long handle = in.readLong();
            long offset = in.readLong();
            int length = in.readInt();
            byte[] data = type == NBD_CMD_WRITE ? new byte[length] : null;
            if (data != null) {
                in.readFully(data);
            }
            if (type == NBD_CMD_DISC) {
                return;
            }
            commands.add(new Command(number, type, flags, offset, length));
            if (silent) {
                continue;
            }
            if (shutdownReplies.getAndUpdate(left -> Math.max(0, left - 1)) > 0) {
                reply(out, handle, ESHUTDOWN, null);
                continue;
            }
            if (type == NBD_CMD_FLUSH) {
                flushArrived.countDown();
                if (holdFlushes) {
                    continue; // never answered: crash() drops it
                }
            }
            byte[] answer = apply(type, flags, offset, length, data);
            if (holdReplies == 0) {
                reply(out, handle, 0, answer);
                continue;
            }
            heldReplies.add(new Object[] {handle, answer});
            if (heldReplies.size() == holdReplies) {
                holdReplies = 0;
                for (Object[] held : heldReplies.reversed()) {
                    reply(out, (long) held[0], 0, (byte[]) held[1]);
                }
                heldReplies.clear();
            }
        }
    }

    private byte[] apply(int type, int flags, long offset, int length, byte[] data) {
        synchronized (lock) {
            int at = (int) offset;
            switch (type) {
                case NBD_CMD_READ -> {
                    return Arrays.copyOfRange(current, at, at + length);
                }
                case NBD_CMD_WRITE -> System.arraycopy(data, 0, current, at, length);
                case NBD_CMD_WRITE_ZEROES, NBD_CMD_TRIM -> Arrays.fill(current, at, at + length, (byte) 0);
                case NBD_CMD_FLUSH -> durable = current.clone();
                default -> throw new IllegalStateException("fake NBD server: command " + type);
            }
            if ((flags & NBD_CMD_FLAG_FUA) != 0) {
                System.arraycopy(current, at, durable, at, length);
            }
            return null;
        }
    }

    private static void reply(DataOutputStream out, long handle, int error, byte[] data) throws IOException {
        synchronized (out) {
            out.writeInt(NBD_SIMPLE_REPLY_MAGIC);
            out.writeInt(error);
            out.writeLong(handle);
            if (data != null) {
                out.write(data);
            }
            out.flush();
        }
    }

    /** @return the commands of one type, in order */
    List<Command> commands(int type) {
        List<Command> found = new ArrayList<>();
        for (Command command : commands) {
            if (command.type() == type) {
                found.add(command);
            }
        }
        return found;
    }

    /** Waits for a latch, failing the test if it takes more than 10 s. */
    static void await(CountDownLatch latch) throws InterruptedException {
        if (!latch.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("timed out waiting for the fake NBD server");
        }
    }
}
