import { S3ObjectUrls } from '../aws/s3-object-urls';
import { bucket } from './objects';
import { signer } from './signer';

/** Presigned read URLs of the file bucket, for `GET /drive/download?redirect=true`. */
export const objectUrls = new S3ObjectUrls(signer, bucket);
