/* SPDX-License-Identifier: MIT */
/*
 * BenchEvents - the JFR anchor of bench/run.sh.
 *
 * Commits a custom jdk.jfr.Event with 3 fields (a short string from a set of
 * 16, a long and an int: the same value sequence as bench/gen_events.c:
 * name = NAMES[i % 16], value = i * 7919, count = i % 1000) into a
 * jdk.jfr.Recording that has only this event enabled, threshold 0, stack
 * traces off (or on with --stack).
 *
 *   java -cp DIR BenchEvents write N FILE [--stack]
 *       commit N events, stop the recording into FILE; prints one line
 *       "events=N seconds=S events_per_s=E ns_per_commit=X bytes=B".
 *   java -cp DIR BenchEvents hot N ROUNDS THREADS [--stack|--disabled|--duration]
 *       JIT warm-up (2 rounds, discarded), then ROUNDS rounds of N commits per
 *       thread while a recording to a temporary file runs; prints
 *       "ns_per_commit median=M min=A max=B rounds=R threads=T mode=..."
 *       where each sample is one thread's elapsed time of one round / N.
 *       --disabled: the recording runs but this event type is disabled.
 *       --duration: each event is a duration event: begin() (its start
 *       time), the fields, commit() (its end time and duration), what a
 *       JFR user writes to time a piece of work (mode=duration).
 */
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CyclicBarrier;

import jdk.jfr.Category;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.Recording;

public final class BenchEvents {
	@Name("bench.Sample")
	@Label("Sample")
	@Category("Bench")
	static final class Sample extends Event {
		@Label("Name")
		String name;
		@Label("Value")
		long value;
		@Label("Count")
		int count;
	}

	/* 16 strings of 12 characters; bench/gen_events.c has the same list. */
	static final String[] NAMES = {
		"alpha.events", "bravo.events", "charlie.evts", "delta.events",
		"echo.events1", "foxtrot.evts", "golf.events1", "hotel.events",
		"india.events", "juliet.evnts", "kilo.events1", "lima.events1",
		"mike.events1", "november.evt", "oscar.events", "papa.events1",
	};

	static volatile long sink;

	static void commitRange(long from, long to) {
		for (long i = from; i < to; i++) {
			Sample e = new Sample();
			e.name = NAMES[(int) (i & 15)];
			e.value = i * 7919L;
			e.count = (int) (i % 1000);
			e.commit();
		}
	}

	/* begin() then commit(): start time, end time and duration recorded */
	static void commitRangeDuration(long from, long to) {
		for (long i = from; i < to; i++) {
			Sample e = new Sample();
			e.begin();
			e.name = NAMES[(int) (i & 15)];
			e.value = i * 7919L;
			e.count = (int) (i % 1000);
			e.commit();
		}
	}

	static Recording newRecording(boolean stack, boolean disabled) {
		Recording r = new Recording();
		r.setName("bench");
		if (disabled) {
			r.disable(Sample.class);
		} else if (stack) {
			r.enable(Sample.class).withStackTrace().withoutThreshold();
		} else {
			r.enable(Sample.class).withoutStackTrace().withoutThreshold();
		}
		return r;
	}

	static void write(long n, String file, boolean stack) throws Exception {
		Path path = Paths.get(file);
		Recording r = newRecording(stack, false);
		r.setDestination(path);
		r.start();
		long t0 = System.nanoTime();
		commitRange(0, n);
		long t1 = System.nanoTime();
		r.stop();
		r.close();
		double s = (t1 - t0) / 1e9;
		System.out.printf("events=%d seconds=%.3f events_per_s=%.0f ns_per_commit=%.2f bytes=%d%n",
				  n, s, n / s, (t1 - t0) / (double) n, Files.size(path));
	}

	static void hot(long n, int rounds, int threads, boolean stack, boolean disabled, boolean duration) throws Exception {
		Path tmp = Files.createTempFile("bench-hot", ".jfr");
		Recording r = newRecording(stack, disabled);
		r.setDestination(tmp);
		r.start();
		final int warm = 2;
		final List<Double> samples = Collections.synchronizedList(new ArrayList<>());
		final CyclicBarrier barrier = new CyclicBarrier(threads);
		Thread[] ts = new Thread[threads];
		final Throwable[] failure = new Throwable[1];
		for (int t = 0; t < threads; t++) {
			final long base = (long) t * n * (warm + rounds);
			ts[t] = new Thread(() -> {
				try {
					for (int k = 0; k < warm + rounds; k++) {
						barrier.await();
						long from = base + (long) k * n;
						long t0 = System.nanoTime();
						if (duration)
							commitRangeDuration(from, from + n);
						else
							commitRange(from, from + n);
						long t1 = System.nanoTime();
						if (k >= warm)
							samples.add((t1 - t0) / (double) n);
					}
				} catch (Throwable e) {
					failure[0] = e;
				}
			}, "bench-" + t);
			ts[t].start();
		}
		for (Thread t : ts)
			t.join();
		r.stop();
		r.close();
		Files.deleteIfExists(tmp);
		if (failure[0] != null)
			throw new RuntimeException(failure[0]);
		List<Double> s = new ArrayList<>(samples);
		Collections.sort(s);
		double med = s.size() % 2 == 1 ? s.get(s.size() / 2)
			: (s.get(s.size() / 2 - 1) + s.get(s.size() / 2)) / 2;
		System.out.printf("ns_per_commit median=%.2f min=%.2f max=%.2f rounds=%d threads=%d mode=%s%n",
				  med, s.get(0), s.get(s.size() - 1), rounds, threads,
				  disabled ? "disabled" : stack ? "stack" : duration ? "duration" : "on");
	}

	static void usage() {
		System.err.println("usage: BenchEvents write N FILE [--stack]\n"
				   + "       BenchEvents hot N ROUNDS THREADS [--stack|--disabled|--duration]");
		System.exit(2);
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 3)
			usage();
		boolean stack = false, disabled = false, duration = false;
		for (String a : args) {
			if (a.equals("--stack"))
				stack = true;
			else if (a.equals("--disabled"))
				disabled = true;
			else if (a.equals("--duration"))
				duration = true;
		}
		if (args[0].equals("write")) {
			write(Long.parseLong(args[1]), args[2], stack);
		} else if (args[0].equals("hot") && args.length >= 4) {
			hot(Long.parseLong(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), stack, disabled, duration);
		} else {
			usage();
		}
	}
}
