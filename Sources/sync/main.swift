print("sync")
