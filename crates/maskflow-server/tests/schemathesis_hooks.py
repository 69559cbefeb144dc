"""Schemathesis check for Maskflow's API: a 5xx is a failure unless the
OpenAPI document lists it for that route (502 from an LLM back end, 503 with
no keyring, 507 on a full disk are answers, not crashes)."""

import schemathesis


@schemathesis.check
def no_undocumented_server_error(ctx, response, case):
    if response.status_code < 500:
        return None
    documented = case.operation.definition.raw.get("responses", {})
    if str(response.status_code) not in documented:
        raise AssertionError(
            f"undocumented {response.status_code} from {case.method} {case.path}: {response.text[:300]}"
        )
    return None
