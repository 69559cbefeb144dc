import { describe, expect, it } from "vitest";
import { splitTokenHash } from "./token";

describe("splitTokenHash", () => {
  it("takes the token of the printed URL's fragment", () => {
    expect(splitTokenHash("#token=abc-123_x")).toEqual({ token: "abc-123_x", rest: "" });
  });
  it("keeps a route that follows the token", () => {
    expect(splitTokenHash("#token=abc#/flows/review/flow_1")).toEqual({ token: "abc", rest: "#/flows/review/flow_1" });
    expect(splitTokenHash("#token=abc&/workflows")).toEqual({ token: "abc", rest: "#/workflows" });
  });
  it("leaves fragments without a token alone", () => {
    expect(splitTokenHash("")).toBeNull();
    expect(splitTokenHash("#/workflows")).toBeNull();
    expect(splitTokenHash("#token=")).toBeNull();
    expect(splitTokenHash("#/builder?token=abc")).toBeNull();
    expect(splitTokenHash("#token=%E0%A4%A")).toBeNull();
  });
});
