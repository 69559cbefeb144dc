// Small shared pieces: status badge, notices, spinner, empty state.
import type { ComponentChildren } from "preact";
import type { Status } from "../generated";
import type { Notice } from "../lib/errors";
import { STATUS } from "../lib/status";

export function StatusBadge({ status }: { status: Status }) {
  const info = STATUS[status];
  return (
    <span class={`badge tone-${info.tone}`} title={info.hint} data-status={status}>
      {info.tone === "busy" && <span class="dot" aria-hidden="true" />}
      {info.label}
    </span>
  );
}

export function NoticeBanner({ notice, onClose }: { notice: Notice; onClose?: () => void }) {
  return (
    <div class={`notice notice-${notice.tone}`} role={notice.tone === "error" ? "alert" : "status"}>
      <div>
        <strong>{notice.title}</strong>
        <p>{notice.detail}</p>
      </div>
      {onClose && (
        <button type="button" class="icon-button" aria-label="Dismiss" onClick={onClose}>
          ×
        </button>
      )}
    </div>
  );
}

export function Spinner({ label }: { label: string }) {
  return (
    <span class="spinner-wrap" role="status">
      <span class="spinner" aria-hidden="true" />
      <span>{label}</span>
    </span>
  );
}

export function EmptyState({
  title,
  children,
  icon,
}: {
  title: string;
  children?: ComponentChildren;
  icon?: string;
}) {
  return (
    <div class="empty">
      {icon && (
        <div class="empty-icon" aria-hidden="true">
          {icon}
        </div>
      )}
      <h3>{title}</h3>
      {children}
    </div>
  );
}

export function ProgressBar({ value, label }: { value: number; label: string }) {
  const pct = Math.max(0, Math.min(100, Math.round(value * 100)));
  return (
    <div
      class="progress"
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct}
    >
      <div class="progress-fill" style={{ width: `${pct}%` }} />
    </div>
  );
}
