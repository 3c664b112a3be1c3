/** Batch regression over the CDP benchmark set (issue 4). */
package klap.regress;
