// Request bodies as Microsoft Entra ID and Okta send them, copied from their documentation (the
// ids they carry are replaced by Wisp's where a request names a resource Wisp made).
//
// Entra ID: Microsoft Learn, "Tutorial: Develop and plan provisioning for a SCIM endpoint in
//   Microsoft Entra ID" (learn.microsoft.com/entra/identity/app-provisioning/use-scim-to-provision-users-and-groups),
//   sections "User Operations" and "Group Operations"; and "Known issues and resolutions with SCIM
//   2.0 protocol compliance of the Microsoft Entra user provisioning service"
//   (learn.microsoft.com/entra/identity/app-provisioning/application-provisioning-config-problem-scim-compatibility)
//   for the capitalised ops, booleans as strings and member removal by filter.
// Okta: developer.okta.com/docs/api/openapi/okta-scim/guides/scim-20 ("Okta and SCIM Version 2.0").

const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

export const entra = {
  /** "Create User": POST /Users. */
  createUser: {
    schemas: [
      "urn:ietf:params:scim:schemas:core:2.0:User",
      "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
    ],
    externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
    userName: "Test_User_ab6490ee-1e48-479e-a20b-2d77186b5dd1",
    active: true,
    emails: [
      { primary: true, type: "work", value: "Test_User_fd0ea19b-0777-472c-9f96-4f70d2226f2e@testuser.com" },
    ],
    meta: { resourceType: "User" },
    name: { formatted: "givenName familyName", familyName: "familyName", givenName: "givenName" },
    roles: [],
  },
  /** "Get User by query": GET /Users?filter=userName eq "..." */
  userQuery: (userName: string) => `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`,
  /** "Get User by query - Zero results" (also what "Test Connection" sends). */
  noUserQuery: `/Users?filter=${encodeURIComponent('userName eq "non-existent user"')}`,
  /** "Update User [Multi-valued properties]": PATCH /Users/{id}. */
  patchMultiValued: {
    schemas: [PATCH_OP],
    Operations: [
      { op: "Replace", path: 'emails[type eq "work"].value', value: "updatedEmail@microsoft.com" },
      { op: "Replace", path: "name.familyName", value: "updatedFamilyName" },
    ],
  },
  /** "Update User [Single-valued properties]". */
  patchSingleValued: {
    schemas: [PATCH_OP],
    Operations: [
      { op: "Replace", path: "userName", value: "5b50642d-79fc-4410-9e90-4c077cdd1a59@testuser.com" },
    ],
  },
  /** An enterprise-extension attribute, which Entra sends with the default mappings (Wisp keeps none). */
  patchExtension: {
    schemas: [PATCH_OP],
    Operations: [
      {
        op: "Add",
        path: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department",
        value: "Marketing",
      },
    ],
  },
  /** "Disable User". */
  disableUser: {
    Operations: [{ op: "Replace", path: "active", value: false }],
    schemas: [PATCH_OP],
  },
  /** The compatibility article: booleans as strings, capitalised op. */
  enableUserAsString: {
    schemas: [PATCH_OP],
    Operations: [{ op: "Replace", path: "active", value: "True" }],
  },
  disableUserAsString: {
    schemas: [PATCH_OP],
    Operations: [{ op: "Replace", path: "active", value: "False" }],
  },
  /** "Create Group". */
  createGroup: {
    schemas: [
      "urn:ietf:params:scim:schemas:core:2.0:Group",
      "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group",
    ],
    externalId: "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159",
    displayName: "displayName",
    meta: { resourceType: "Group" },
  },
  /** "Get Group by displayName". */
  groupQuery: (displayName: string) =>
    `/Groups?excludedAttributes=members&filter=${encodeURIComponent(`displayName eq "${displayName}"`)}`,
  /** "Update Group [Non-member attributes]". */
  renameGroup: {
    schemas: [PATCH_OP],
    Operations: [
      { op: "Replace", path: "displayName", value: "1879db59-3bdf-4490-ad68-ab880a269474updatedDisplayName" },
    ],
  },
  /** "Update Group [Add Members]". */
  addMember: (userId: string) => ({
    schemas: [PATCH_OP],
    Operations: [{ op: "Add", path: "members", value: [{ $ref: null, value: userId }] }],
  }),
  /** "Update Group [Remove Members]". */
  removeMember: (userId: string) => ({
    schemas: [PATCH_OP],
    Operations: [{ op: "Remove", path: "members", value: [{ $ref: null, value: userId }] }],
  }),
  /** The compatibility article: a member removed by a value filter. */
  removeMemberByFilter: (userId: string) => ({
    schemas: [PATCH_OP],
    Operations: [{ op: "remove", path: `members[value eq "${userId}"]` }],
  }),
};

export const okta = {
  /** "Retrieve Users": the existence check before a create. */
  userQuery: (userName: string) =>
    `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`,
  /** "Create the User". */
  createUser: {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    userName: "test.user@okta.local",
    name: { givenName: "Test", familyName: "User" },
    emails: [{ primary: true, value: "test.user@okta.local", type: "work" }],
    displayName: "Test User",
    locale: "en-US",
    externalId: "00ujl29u0le5T6Aj10h7",
    groups: [],
    password: "1mz050nq",
    active: true,
  },
  /** "Update a specific User (PUT)"; with active false it is how PUT-based integrations deactivate. */
  replaceUser: (id: string, active: boolean) => ({
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    id,
    userName: "test.user@okta.local",
    name: { givenName: "Another", middleName: "", familyName: "User" },
    emails: [{ primary: true, value: "test.user@okta.local", type: "work" }],
    displayName: "Another User",
    locale: "en-US",
    externalId: "00u1dhhb1fkIGP7RL1d8",
    groups: [],
    active,
    meta: {
      resourceType: "User",
      created: "2019-09-09T16:36:26.034Z",
      lastModified: "2019-09-09T16:36:26.034Z",
    },
  }),
  /** "Update a specific User (PATCH)": deactivation. */
  deactivateUser: {
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", value: { active: false } }],
  },
  /** "Create Groups". */
  createGroup: {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
    displayName: "Test SCIMv2",
    members: [],
  },
  /** "Update a specific Group name": the group's own id sent beside the name. */
  renameGroup: (id: string) => ({
    schemas: [PATCH_OP],
    Operations: [{ op: "replace", value: { id, displayName: "Test SCIMv2 renamed" } }],
  }),
  /** "Update specific Group membership". */
  membership: (removeId: string, addId: string) => ({
    schemas: [PATCH_OP],
    Operations: [
      { op: "remove", path: `members[value eq "${removeId}"]` },
      { op: "add", path: "members", value: [{ value: addId, display: "test.user@okta.local" }] },
    ],
  }),
};
