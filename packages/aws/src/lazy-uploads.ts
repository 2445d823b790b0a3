/** Presigned uploads to S3 (the API answers their URLs): the S3 client loads on first use. */

import type { DocumentUploads } from "@stackvm/core";
import { lazyPort } from "@stackvm/core";
import type { AwsClientsOptions } from "./client-config";

export function lazyS3Uploads(options: AwsClientsOptions, bucket: string): DocumentUploads {
  return lazyPort<DocumentUploads>(async () => {
    const [{ S3Uploads }, { s3Client }] = await Promise.all([
      import("./s3-uploads"),
      import("./s3-blobs"),
    ]);
    return new S3Uploads(s3Client(options), bucket);
  });
}
