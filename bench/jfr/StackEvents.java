/* SPDX-License-Identifier: MIT */
/*
 * StackEvents - the JFR side of the exporter benchmark (bench/exporters.sh):
 * the same samples as bench/gen_stacks.c, committed from real Java call
 * stacks so that JFR records comparable stack traces.
 *
 *   java -cp DIR StackEvents N FILE
 *
 * Commits N events "bench.CPUSample" (period long, overruns int) from 16
 * threads (event k on thread k % 16) into a Recording with only this event
 * enabled, stack traces on, no threshold.  Event k is committed at the stack
 * of pool index splitmix64(k) % 2000, built like gen_stacks.c: r seeded with
 * s + 1, depth = 8 + next(r) % 33, frame j (root down) = f<next(r) % 8>,
 * below Thread.run / StackEvents.lambda / workerLoop / root.  The leaf frame
 * is the fN method that calls commit().
 * Prints: events=N seconds=S events_per_s=E bytes=B
 */
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import jdk.jfr.Category;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Recording;

public final class StackEvents {
	@Name("bench.CPUSample")
	@Label("CPU Sample")
	@Category("Bench")
	static final class CpuSample extends Event {
		@Label("Period")
		long period;
		@Label("Overruns")
		int overruns;
	}

	static final int NSTACKS = 2000, NTHREADS = 16;
	static final int[][] PATHS = new int[NSTACKS][];

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
	}

	/* fN(p, l): frame l of path p is fN; commit at the last level, else call
	 * the next level directly (no helper frame in between). */
	static void f0(int[] p, int l) {
		if (++l == p.length) { CpuSample e = new CpuSample(); e.period = 10000000L; e.commit(); return; }
		switch (p[l]) { case 0 -> f0(p, l); case 1 -> f1(p, l); case 2 -> f2(p, l); case 3 -> f3(p, l); case 4 -> f4(p, l); case 5 -> f5(p, l); case 6 -> f6(p, l); default -> f7(p, l); }
	}
	static void f1(int[] p, int l) {
		if (++l == p.length) { CpuSample e = new CpuSample(); e.period = 10000000L; e.commit(); return; }
		switch (p[l]) { case 0 -> f0(p, l); case 1 -> f1(p, l); case 2 -> f2(p, l); case 3 -> f3(p, l); case 4 -> f4(p, l); case 5 -> f5(p, l); case 6 -> f6(p, l); default -> f7(p, l); }
	}
	static void f2(int[] p, int l) {
		if (++l == p.length) { CpuSample e = new CpuSample(); e.period = 10000000L; e.commit(); return; }
		switch (p[l]) { case 0 -> f0(p, l); case 1 -> f1(p, l); case 2 -> f2(p, l); case 3 -> f3(p, l); case 4 -> f4(p, l); case 5 -> f5(p, l); case 6 -> f6(p, l); default -> f7(p, l); }
	}
	static void f3(int[] p, int l) {
		if (++l == p.length) { CpuSample e = new CpuSample(); e.period = 10000000L; e.commit(); return; }
		switch (p[l]) { case 0 -> f0(p, l); case 1 -> f1(p, l); case 2 -> f2(p, l); case 3 -> f3(p, l); case 4 -> f4(p, l); case 5 -> f5(p, l); case 6 -> f6(p, l); default -> f7(p, l); }
	}
	static void f4(int[] p, int l) {
		if (++l == p.length) { CpuSample e = new CpuSample(); e.period = 10000000L; e.commit(); return; }
		switch (p[l]) { case 0 -> f0(p, l); case 1 -> f1(p, l); case 2 -> f2(p, l); case 3 -> f3(p, l); case 4 -> f4(p, l); case 5 -> f5(p, l); case 6 -> f6(p, l); default -> f7(p, l); }
	}
	static void f5(int[] p, int l) {
		if (++l == p.length) { CpuSample e = new CpuSample(); e.period = 10000000L; e.commit(); return; }
		switch (p[l]) { case 0 -> f0(p, l); case 1 -> f1(p, l); case 2 -> f2(p, l); case 3 -> f3(p, l); case 4 -> f4(p, l); case 5 -> f5(p, l); case 6 -> f6(p, l); default -> f7(p, l); }
	}
	static void f6(int[] p, int l) {
		if (++l == p.length) { CpuSample e = new CpuSample(); e.period = 10000000L; e.commit(); return; }
		switch (p[l]) { case 0 -> f0(p, l); case 1 -> f1(p, l); case 2 -> f2(p, l); case 3 -> f3(p, l); case 4 -> f4(p, l); case 5 -> f5(p, l); case 6 -> f6(p, l); default -> f7(p, l); }
	}
	static void f7(int[] p, int l) {
		if (++l == p.length) { CpuSample e = new CpuSample(); e.period = 10000000L; e.commit(); return; }
		switch (p[l]) { case 0 -> f0(p, l); case 1 -> f1(p, l); case 2 -> f2(p, l); case 3 -> f3(p, l); case 4 -> f4(p, l); case 5 -> f5(p, l); case 6 -> f6(p, l); default -> f7(p, l); }
	}

	/* the root of every path */
	static void go(int[] p, int l) {
		switch (p[l]) {
		case 0 -> f0(p, l);
		case 1 -> f1(p, l);
		case 2 -> f2(p, l);
		case 3 -> f3(p, l);
		case 4 -> f4(p, l);
		case 5 -> f5(p, l);
		case 6 -> f6(p, l);
		default -> f7(p, l);
		}
	}

	static void workerLoop(long n, int t) {
		for (long k = t; k < n; k += NTHREADS)
			go(PATHS[(int) Long.remainderUnsigned(mix64(k), NSTACKS)], 0);
	}

	public static void main(String[] args) throws Exception {
		if (args.length != 2) {
			System.err.println("usage: java StackEvents N FILE");
			System.exit(2);
		}
		long n = Long.parseLong(args[0]);
		Path path = Paths.get(args[1]);
		Recording r = new Recording();
		r.setName("stacks");
		r.enable(CpuSample.class).withStackTrace().withoutThreshold();
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
		System.out.printf("events=%d seconds=%.3f events_per_s=%.0f bytes=%d%n", n, s, n / s, Files.size(path));
	}
}
