#define VOLATILE volatile
