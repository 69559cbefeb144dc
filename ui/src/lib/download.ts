// Saves text as a file through a temporary link: works in the browser and in
// the Tauri window alike, with no file-system permission.

/** Offers `text` for download under `name`. */
export function download(name: string, text: string, type: string) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
