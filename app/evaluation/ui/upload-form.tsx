/**
 * Upload a run folder from the browser (docs/evaluation.md, "Runs in the app"): the admin chooses a folder (a run
 * folder, or a folder of run folders); its files are sent with their paths in the folder, and the server imports them
 * as `eval-import` imports a folder — Preview (a dry run) or Import, the same refusals, all or nothing.
 */
import { useSubmit, useNavigation } from "@remix-run/react";
import type { FormEvent } from "react";
import { Csrf } from "~/ui/root-data";

export function UploadForm() {
  const submit = useSubmit();
  const busy = useNavigation().state !== "idle";
  const onSubmit = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = e.currentTarget;
    const submitter = (e.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    const input = form.elements.namedItem("files") as HTMLInputElement;
    const data = new FormData();
    // The CSRF token first: the server checks it before it writes any file.
    data.append("csrf", String(new FormData(form).get("csrf") ?? ""));
    data.append("intent", submitter?.value ?? "preview");
    // Each file after its path in the folder (a browser sends a file's name without its folders).
    for (const file of Array.from(input.files ?? [])) {
      data.append("path", file.webkitRelativePath || file.name);
      data.append("files", file);
    }
    submit(data, { method: "post", encType: "multipart/form-data" });
  };
  return (
    <form
      method="post"
      encType="multipart/form-data"
      className="card stack"
      data-testid="upload-form"
      onSubmit={onSubmit}
    >
      <Csrf />
      <p className="muted">
        Or upload a folder from this computer: a run folder, or a folder of run folders. Its{" "}
        <code>trajectories.jsonl</code>, <code>run.json</code> and <code>timing.json</code> files are sent; the rest
        stays here.
      </p>
      <label>
        Run folder{" "}
        <input
          type="file"
          name="files"
          required
          multiple
          {...({ webkitdirectory: "", directory: "" } as Record<string, string>)}
        />
      </label>
      <div className="row">
        <button type="submit" name="intent" value="preview" className="secondary" disabled={busy}>
          Preview the upload
        </button>
        <button type="submit" name="intent" value="import" disabled={busy}>
          Upload and import
        </button>
      </div>
    </form>
  );
}
