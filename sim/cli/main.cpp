#include <systemc>
#include <iostream>

int sc_main(int, char **) {
  std::cout << "neuronsim: under construction\n";
  return 0;
}
