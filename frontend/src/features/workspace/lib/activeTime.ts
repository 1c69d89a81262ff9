// Active time on a key: the seconds the annotator worked on it, measured
// by the workspace and sent with the autosave and the submit. Time counts only while
// the tab is visible and there was input (a key, the pointer, the wheel, typing)
// within the last minute; opening the key counts as input (the annotator just chose
// it). The server keeps the largest total it is sent, so a retried write cannot count
// twice, and the workspace counts on from the server's total.

/** Without input for this long, time stops counting (until the next input). */
export const IDLE_AFTER_MS = 60_000;

/** The events that count as input. */
export const INPUT_EVENTS = ['keydown', 'pointerdown', 'pointermove', 'wheel', 'input'] as const;

/**
 * The counting, with time given by the caller (milliseconds, any epoch): no timer of
 * its own, the total is worked out when asked for.
 */
export class ActiveTimer {
  private countedMs = 0;
  private baseSeconds = 0;
  private since: number;
  private lastInput: number;
  private visible: boolean;

  constructor(now: number, visible: boolean) {
    this.since = now;
    this.lastInput = now;
    this.visible = visible;
  }

  /** Credit the time from the last look until `now` that counts. */
  private accrue(now: number): void {
    if (this.visible) {
      const end = Math.min(now, this.lastInput + IDLE_AFTER_MS);
      if (end > this.since) this.countedMs += end - this.since;
    }
    this.since = Math.max(this.since, now);
  }

  input(now: number): void {
    this.accrue(now);
    this.lastInput = now;
  }

  setVisible(visible: boolean, now: number): void {
    this.accrue(now);
    this.visible = visible;
  }

  /** The total the server had (the time of earlier visits): counted on from. */
  resumeFrom(seconds: number): void {
    this.baseSeconds = Math.max(0, seconds);
  }

  /** The running total in seconds (to the tenth). */
  seconds(now: number): number {
    this.accrue(now);
    return Math.round((this.baseSeconds + this.countedMs / 1000) * 10) / 10;
  }
}
