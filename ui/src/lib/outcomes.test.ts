// Unit tests of how the Builder tells outcomes (issue 28): stored notices,
// a stopped reply, a back end's timeout.
import { describe, expect, it } from "vitest";
import { ApiError } from "../transport";
import { noticeOf } from "./errors";
import { NOTICE, toldInChat, wasCancelled } from "./outcomes";

describe("outcomes", () => {
  it("knows when the chat already tells how a version ended", () => {
    const messages = [
      { role: "user", version_id: "wv_2" },
      { role: "assistant", version_id: "wv_2" },
      { role: NOTICE, version_id: "wv_2" },
    ];
    expect(toldInChat(messages, "wv_2")).toBe(true);
    // A notice on another version, or none, leaves the status callout to say it.
    expect(toldInChat(messages, "wv_3")).toBe(false);
    expect(toldInChat(messages.slice(0, 2), "wv_2")).toBe(false);
  });
  it("tells a stopped reply from a failure", () => {
    expect(wasCancelled(new ApiError("cancelled", "manual: the request was cancelled (dismissed)"))).toBe(true);
    expect(wasCancelled(new ApiError("provider_error", "OpenAI failed: 500"))).toBe(false);
    expect(noticeOf(new ApiError("cancelled", "stopped")).tone).toBe("info");
  });
  it("says a back end did not answer in time", () => {
    const n = noticeOf(new ApiError("provider_timeout", "OpenAI failed: http://x did not answer within 180 s"));
    expect(n.tone).toBe("error");
    expect(n.title).toMatch(/did not answer in time/);
  });
});
