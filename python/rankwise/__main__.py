from rankwise.cli import main

main()
