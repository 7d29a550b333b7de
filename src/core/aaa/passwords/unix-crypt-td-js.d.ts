// Types for unix-crypt-td-js (it ships none): traditional DES crypt(3) of a password (a string of
// character codes or an array of octets; it stops at a zero, as C does) with a 2-character salt.
declare module "unix-crypt-td-js" {
  export default function unixCryptTD(password: string | number[], salt: string | number[]): string;
}
