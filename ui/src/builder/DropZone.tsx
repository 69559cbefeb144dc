// Where data files come in: dropped on the zone or chosen with the file
// picker (the desktop window's native drops arrive through the transport).
import { useRef, useState } from "preact/hooks";
import type { FileSource } from "../transport";

/** The drop zone and file picker of the Builder. */
export function DropZone({ onFiles, disabled }: { onFiles: (s: FileSource[]) => void; disabled: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);
  return (
    <div
      class={`dropzone${over ? " over" : ""}${disabled ? " disabled" : ""}`}
      data-testid="dropzone"
      onDragOver={(e) => {
        e.preventDefault();
        if (!disabled) setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        const files = Array.from(e.dataTransfer?.files ?? []);
        if (!disabled && files.length) onFiles(files.map((file) => ({ kind: "file", file })));
      }}
    >
      <div class="dropzone-icon" aria-hidden="true">
        ⇪
      </div>
      <p>
        <strong>Drop data files here</strong> — CSV, Excel, PDF, Word or images, as many as you need.
      </p>
      <p class="muted">They are read on this machine. Only a masked extract is ever shown to an AI, after you approve it.</p>
      <button type="button" class="button" disabled={disabled} onClick={() => input.current?.click()}>
        Choose files…
      </button>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        aria-label="Choose files"
        data-testid="file-input"
        onChange={(e) => {
          const el = e.currentTarget;
          const files = Array.from(el.files ?? []);
          el.value = "";
          if (files.length) onFiles(files.map((file) => ({ kind: "file", file })));
        }}
      />
    </div>
  );
}
