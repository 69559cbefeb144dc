// Saves text or a fetched file through a temporary link to a blob: works in
// the browser and in the Tauri window alike, with no file-system permission.

/** Offers `text` for download under `name`. */
export function download(name: string, text: string, type: string) {
  saveBlob(name, new Blob([text], { type }));
}

/** Offers `blob` for download under `name` (a file fetched with the token, too). */
export function saveBlob(name: string, blob: Blob) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Long enough for a large file's download to have started reading it.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
