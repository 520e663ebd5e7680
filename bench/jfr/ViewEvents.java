/* SPDX-License-Identifier: MIT */
/*
 * ViewEvents - the JFR side of the views benchmark (bench/views.sh): the
 * recording of bench/gen_stacks.c (event k on thread k % 16 at the stack of
 * pool index splitmix64(k) % 2000, the paths of bench/jfr/StackEvents.java),
 * with every 10th event (k % 10 == 9) a lock wait instead of a CPU sample.
 *
 *   java -cp DIR ViewEvents N FILE
 *
 * The lock wait is an event named jdk.JavaMonitorEnter (fields monitorClass
 * as a String: "lock-L", previousOwner as a String: the holder's thread name,
 * address long), the type `jfr view contention-by-site` and
 * `latencies-by-type` read (jfr's queries match the type by name, so the
 * views read these events exactly as the JVM's own; a real contended monitor
 * costs microseconds per event to produce, 10 million of them minutes).  Its
 * duration is what JFR measures between begin() and commit() (tens of ns);
 * gen_stacks gives its rec.LockWait events 20-120 us: the views do the same
 * work per event whatever the value.  The others are bench.CPUSample
 * (period, overruns) as in StackEvents.  Stack traces on, no threshold.
 * Prints: events=N samples=S lockwaits=L seconds=T bytes=B
 */
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import jdk.jfr.Category;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Recording;

public final class ViewEvents {
	@Name("bench.CPUSample")
	@Label("CPU Sample")
	@Category("Bench")
	static final class CpuSample extends Event {
		@Label("Period")
		long period;
		@Label("Overruns")
		int overruns;
	}

	@Name("jdk.JavaMonitorEnter")
	@Label("Java Monitor Blocked")
	@Category("Bench")
	static final class MonitorEnter extends Event {
		@Label("Monitor Class")
		String monitorClass;
		@Label("Previous Monitor Owner")
		String previousOwner;
		@Label("Monitor Address")
		long address;
	}

	static final int NSTACKS = 2000, NTHREADS = 16, NLOCKS = 8;
	static final int[][] PATHS = new int[NSTACKS][];
	static final String[] LOCKS = new String[NLOCKS];

	static long mix64(long z) {
		z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
		z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
		return z ^ (z >>> 31);
	}

	static {
		for (int s = 0; s < NSTACKS; s++) {
			long r = s + 1;
			r += 0x9E3779B97F4A7C15L;
			int depth = 8 + (int) Long.remainderUnsigned(mix64(r), 33);
			int[] p = new int[depth];
			for (int j = 0; j < depth; j++) {
				r += 0x9E3779B97F4A7C15L;
				p[j] = (int) Long.remainderUnsigned(mix64(r), 8);
			}
			PATHS[s] = p;
		}
		for (int l = 0; l < NLOCKS; l++)
			LOCKS[l] = "lock-" + l;
	}

	/* the event of k, committed at the leaf */
	static void leaf(long k) {
		if (k % 10 == 9) {
			long h = mix64(k);
			int l = (int) Long.remainderUnsigned(h >>> 32, NLOCKS);
			MonitorEnter e = new MonitorEnter();
			e.begin();
			e.monitorClass = LOCKS[l];
			e.previousOwner = "worker-" + ((k + 1) % NTHREADS);
			e.address = 0x7f0000001000L + l * 0x40L;
			e.commit();
		} else {
			CpuSample e = new CpuSample();
			e.period = 10000000L;
			e.commit();
		}
	}

	static void f0(int[] p, int l, long k) {
		if (++l == p.length) { leaf(k); return; }
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}
	static void f1(int[] p, int l, long k) {
		if (++l == p.length) { leaf(k); return; }
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}
	static void f2(int[] p, int l, long k) {
		if (++l == p.length) { leaf(k); return; }
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}
	static void f3(int[] p, int l, long k) {
		if (++l == p.length) { leaf(k); return; }
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}
	static void f4(int[] p, int l, long k) {
		if (++l == p.length) { leaf(k); return; }
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}
	static void f5(int[] p, int l, long k) {
		if (++l == p.length) { leaf(k); return; }
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}
	static void f6(int[] p, int l, long k) {
		if (++l == p.length) { leaf(k); return; }
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}
	static void f7(int[] p, int l, long k) {
		if (++l == p.length) { leaf(k); return; }
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}

	/* the root of every path */
	static void go(int[] p, int l, long k) {
		switch (p[l]) { case 0 -> f0(p, l, k); case 1 -> f1(p, l, k); case 2 -> f2(p, l, k); case 3 -> f3(p, l, k); case 4 -> f4(p, l, k); case 5 -> f5(p, l, k); case 6 -> f6(p, l, k); default -> f7(p, l, k); }
	}

	static void workerLoop(long n, int t) {
		for (long k = t; k < n; k += NTHREADS)
			go(PATHS[(int) Long.remainderUnsigned(mix64(k), NSTACKS)], 0, k);
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 2) {
			System.err.println("usage: java ViewEvents N FILE");
			System.exit(2);
		}
		long n = Long.parseLong(args[0]);
		Path path = Paths.get(args[1]);
		Recording r = new Recording();
		r.setName("views");
		r.enable(CpuSample.class).withStackTrace().withoutThreshold();
		r.enable(MonitorEnter.class).withStackTrace().withoutThreshold();
		r.setDestination(path);
		r.start();
		long t0 = System.nanoTime();
		Thread[] ts = new Thread[NTHREADS];
		for (int t = 0; t < NTHREADS; t++) {
			final int tt = t;
			ts[t] = new Thread(() -> workerLoop(n, tt), "worker-" + t);
			ts[t].start();
		}
		for (Thread t : ts)
			t.join();
		long t1 = System.nanoTime();
		r.stop();
		r.close();
		double s = (t1 - t0) / 1e9;
		long waits = n / 10;
		System.out.printf("events=%d samples=%d lockwaits=%d seconds=%.3f bytes=%d%n", n, n - waits, waits, s,
				  Files.size(path));
	}
}
