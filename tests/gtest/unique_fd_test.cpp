// SPDX-License-Identifier: MIT
#include "npuipc/unique_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <utility>

namespace {

bool fd_is_open(int fd)
{
    return ::fcntl(fd, F_GETFD) != -1;
}

int open_devnull()
{
    int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    return fd;
}

TEST(UniqueFd, DefaultConstructedOwnsNothing)
{
    npuipc::UniqueFd fd;
    EXPECT_FALSE(fd.valid());
    EXPECT_EQ(-1, fd.get());
}

TEST(UniqueFd, ClosesOnDestruction)
{
    int raw = open_devnull();
    {
        npuipc::UniqueFd fd(raw);
        EXPECT_TRUE(fd_is_open(raw));
    }
    EXPECT_FALSE(fd_is_open(raw));
}

TEST(UniqueFd, MoveTransfersOwnershipAndClosesOnce)
{
    int raw = open_devnull();
    npuipc::UniqueFd a(raw);
    npuipc::UniqueFd b(std::move(a));
    EXPECT_FALSE(a.valid());
    EXPECT_EQ(raw, b.get());
    npuipc::UniqueFd c;
    c = std::move(b);
    EXPECT_EQ(raw, c.get());
    c.reset();
    EXPECT_FALSE(fd_is_open(raw));
}

TEST(UniqueFd, MoveAssignmentClosesThePreviousFd)
{
    int first = open_devnull();
    int second = open_devnull();
    npuipc::UniqueFd a(first);
    npuipc::UniqueFd b(second);
    a = std::move(b);
    EXPECT_FALSE(fd_is_open(first));
    EXPECT_TRUE(fd_is_open(second));
}

TEST(UniqueFd, ReleaseGivesUpOwnershipWithoutClosing)
{
    int raw = open_devnull();
    {
        npuipc::UniqueFd fd(raw);
        EXPECT_EQ(raw, fd.release());
        EXPECT_FALSE(fd.valid());
    }
    EXPECT_TRUE(fd_is_open(raw));
    ::close(raw);
}

TEST(UniqueFd, ResetToTheSameFdKeepsItOpen)
{
    int raw = open_devnull();
    npuipc::UniqueFd fd(raw);
    fd.reset(raw);
    EXPECT_TRUE(fd_is_open(raw));
}

} // namespace
