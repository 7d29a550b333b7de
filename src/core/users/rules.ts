// What a valid user looks like. The HTTP schemas reuse these limits so the OpenAPI document says
// the same thing the service enforces for every door.

export { USERNAME_PATTERN } from "../aaa/values.ts";

export const EMAIL_PATTERN =
  "^$|^[^\\s@\\u0000-\\u001f\\u007f]+@[^\\s@\\u0000-\\u001f\\u007f]+\\.[^\\s@\\u0000-\\u001f\\u007f]+$";
export const USER_STATUSES = ["enabled", "disabled"] as const;
export type UserStatus = (typeof USER_STATUSES)[number];
export const MAX_EMAIL = 254;
export const MAX_FULLNAME = 255;
export const MAX_PASSWORD = 128;
export const MAX_SEARCH = 100;

export const USERNAME_RULE = "must be 1-64 characters from A-Z a-z 0-9 @ . _ : -";
export const EMAIL_RULE = "must be an email address";
export const PASSWORD_LENGTH_RULE = `must be 1-${128} characters`;

/** What a users list may be sorted by (`sort=<field>` or `sort=-<field>`). */
export const USER_SORT_FIELDS = [
  "id",
  "username",
  "email",
  "fullname",
  "status",
  "created",
  "updated",
] as const;
export type UserSortField = (typeof USER_SORT_FIELDS)[number];
