// Types for the part of des.js (which ships none) that MS-CHAP uses.
declare module "des.js" {
  interface Cipher {
    update(data: ArrayLike<number>): number[];
    final(): number[];
  }
  const des: {
    DES: {
      create(options: { type: "encrypt" | "decrypt"; key: ArrayLike<number>; padding?: boolean }): Cipher;
    };
  };
  export default des;
}
